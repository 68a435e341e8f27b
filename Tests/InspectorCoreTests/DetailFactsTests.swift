import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// What the detail view says of a flow reads right: its id (for `~id`),
/// a service's handler time named as such, edits of the body and method,
/// durations in the list's units, and the sort order's arrow.
final class DetailFactsTests: XCTestCase {
    private static let size = Size(width: 120, height: 40)

    private func open(_ messages: [Message], tab key: String? = nil) -> AppState {
        var state = AppState(size: Self.size, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        state.press("g", "enter")
        if let key { state.press(key) }
        return state
    }

    private func screen(_ state: AppState) -> String { Renderer.render(state, size: Self.size).text }

    func testTheRequestTabShowsTheFlowsIdAndHowToFilterByIt() {
        let text = screen(open([.flowStarted(Fixtures.started(7))]))
        XCTAssertTrue(text.contains("flow id \(Fixtures.id(7))"), text)
        XCTAssertTrue(text.contains("~id 00000000 filters to it"), text)
    }

    func testAnInboundFlowsWaterfallNamesTheHandlersTimeNotSending() {
        var received = Fixtures.started(1, url: "http://127.0.0.1:8080/checkout")
        received.direction = .inbound
        var done = Fixtures.finished(1)
        // No body read: the agent marks the request at the response head.
        done.timing = Timing(startedAt: Fixtures.epoch.addingTimeInterval(1), requestSent: 0.0468, firstResponseByte: 0.0468, finished: 0.0469)
        let text = screen(open([.flowStarted(received), .flowFinished(done)], tab: "3"))
        XCTAssertTrue(text.contains("handler"), text)
        XCTAssertFalse(text.contains("sending"), text)
        XCTAssertFalse(text.contains("request in"), "no body was read: the whole time is the handler's\n\(text)")
        let handler = text.split(separator: "\n").first { $0.hasPrefix("handler") }
        XCTAssertTrue(handler?.hasSuffix("46.8 ms") == true, "\(String(describing: handler))")
    }

    func testAnInboundFlowWhoseHandlerReadTheBodyShowsBothPhases() {
        var received = Fixtures.started(1, method: "POST", url: "http://127.0.0.1:8080/orders")
        received.direction = .inbound
        var done = Fixtures.finished(1)
        done.timing = Timing(startedAt: Fixtures.epoch.addingTimeInterval(1), requestSent: 0.010, firstResponseByte: 0.050, finished: 0.051)
        let lines = screen(open([.flowStarted(received), .flowFinished(done)], tab: "3")).split(separator: "\n")
        XCTAssertTrue(lines.first { $0.hasPrefix("request in") }?.hasSuffix("10.0 ms") == true, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.first { $0.hasPrefix("handler") }?.hasSuffix("40.0 ms") == true, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.first { $0.hasPrefix("response") }?.hasSuffix("1.0 ms") == true, lines.joined(separator: "\n"))
    }

    func testAMockedFlowsTimingNamesNoConnection() {
        var mocked = Fixtures.started(1, url: "http://127.0.0.1:41841/api/feed")
        mocked.changes = FlowChanges(rules: ["map-local |/api/feed|/tmp/feed.json"], mockedFrom: "/tmp/feed.json")
        let text = screen(open([.flowStarted(mocked), .flowFinished(Fixtures.finished(1))], tab: "3"))
        XCTAssertTrue(text.contains("Connection    none: answered from /tmp/feed.json by a map-local rule"), text)
        XCTAssertFalse(text.contains("Connection    http"), text)
    }

    func testAnOutboundFlowKeepsSendingWaitingReceiving() {
        let text = screen(open([.flowStarted(Fixtures.started(1)), .flowFinished(Fixtures.finished(1))], tab: "3"))
        for phase in ["sending", "waiting", "receiving"] { XCTAssertTrue(text.contains(phase), text) }
    }

    func testABreakpointEditOfTheBodyAndMethodIsReported() {
        var sent = Fixtures.started(1, method: "PUT", body: CapturedBody(data: Data(#"{"qty":2}"#.utf8)))
        sent.changes = FlowChanges(rules: [], originalHeaders: [HTTPHeader(name: "Accept", value: "text/plain")], edited: [.request],
                                   originalMethod: "POST", originalBody: CapturedBody(data: Data(#"{"qty":1}"#.utf8)))
        let text = screen(open([.flowStarted(sent)]))
        XCTAssertTrue(text.contains("Edited headers: changed Accept"), text)
        XCTAssertTrue(text.contains("Edited method: the app's was POST, PUT was sent"), text)
        XCTAssertTrue(text.contains("Edited body: the app's was 9 B, 9 B was sent"), "an edit of the same size still says so\n\(text)")
    }

    func testDurationsOfASecondOrMoreReadInSecondsInTheListAndTheTimingTab() {
        var state = open([.flowStarted(Fixtures.started(1)), .flowFinished(Fixtures.finished(1, duration: 3.0023))], tab: "3")
        XCTAssertTrue(screen(state).contains("total"), screen(state))
        XCTAssertTrue(screen(state).contains("3.00 s"), screen(state))
        XCTAssertFalse(screen(state).contains("3002.3 ms"), screen(state))
        state.press("q")
        XCTAssertTrue(screen(state).contains("3.00s"), screen(state))
        XCTAssertEqual(Format.milliseconds(0.0123), "12.3 ms")
        XCTAssertEqual(Format.milliseconds(0.99994), "999.9 ms")
        XCTAssertEqual(Format.milliseconds(12.34), "12.3 s")
    }

    func testTheSortArrowPointsUpForSmallestFirstAndDownOnceReversed() {
        var state = Fixtures.mixedState(size: Self.size)
        XCTAssertTrue(screen(state).contains("sort: time↑"), "oldest first is ascending")
        state.press("o")
        XCTAssertTrue(screen(state).contains("sort: duration↑"))
        let durations = state.rows.compactMap { state.session.store[$0]?.log.timing.duration }
        XCTAssertEqual(durations, durations.sorted(), "↑: the shortest first")
        state.press("v")
        XCTAssertTrue(screen(state).contains("sort: duration↓"))
    }
}
