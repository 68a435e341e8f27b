import FlowFilter
import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// The detail view shows what the agent says about how it captured a flow:
/// the client and path, the header fields the client added itself, a body the
/// client already decoded, and the client's own phase timings.
final class CaptureSourceDetailTests: XCTestCase {
    private func state(source: CaptureSource?, clientHeaders: [HTTPHeader], phases: TransferPhases?) -> AppState {
        var log = Fixtures.started(1, url: "http://127.0.0.1:8080/feed", headers: [HTTPHeader(name: "Accept", value: "application/json")])
        log.source = source
        log.request.clientHeaders = clientHeaders
        var finished = Fixtures.finished(1)
        finished.response?.headers.append(HTTPHeader(name: "Content-Encoding", value: "gzip"))
        finished.response?.body?.isDecoded = true
        finished.timing.phases = phases
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(log), .flowFinished(finished)]), at: Fixtures.epoch))
        return state
    }

    private func screen(_ state: AppState, after keys: String...) -> String {
        var state = state
        for key in keys { state.press(key) }
        return Renderer.render(state, size: Size(width: 100, height: 30)).text
    }

    private let added = [
        HTTPHeader(name: "Host", value: "127.0.0.1:8080"),
        HTTPHeader(name: "User-Agent", value: "orders/1.0"),
        HTTPHeader(name: "Accept-Encoding", value: "deflate, gzip"),
    ]

    func testTheRequestTabShowsTheClientsFieldsMarkedAfterTheApps() {
        let text = screen(state(source: CaptureSource(client: .urlSession, path: .inPlace), clientHeaders: added, phases: nil), after: "g", "enter")
        XCTAssertTrue(text.contains("captured from URLSession, in-place"), text)
        XCTAssertTrue(text.contains("Headers (4)  1 set by the app, 3 added by URLSession"), text)
        let lines = text.split(separator: "\n").map(String.init)
        let accept = try? XCTUnwrap(lines.firstIndex { $0.contains("Accept: application/json") })
        let host = try? XCTUnwrap(lines.firstIndex { $0.contains("Host: 127.0.0.1:8080") && $0.contains("+ added by URLSession") })
        XCTAssertNotNil(accept, text)
        XCTAssertNotNil(host, text)
        if let accept, let host { XCTAssertLessThan(accept, host, "the app's fields come first") }
    }

    func testWithoutClientFieldsTheHeadingIsAsBefore() {
        let text = screen(state(source: nil, clientHeaders: [], phases: nil), after: "g", "enter")
        XCTAssertTrue(text.contains("Headers (1)"), text)
        XCTAssertFalse(text.contains("added by"), text)
        XCTAssertFalse(text.contains("captured from"), text)
    }

    func testTheOperationIDIsShown() {
        let text = screen(state(source: CaptureSource(client: .openAPI, path: .wire, operationID: "getFeed"), clientHeaders: [], phases: nil),
                          after: "g", "enter")
        XCTAssertTrue(text.contains("captured from OpenAPI, wire · operation getFeed"), text)
    }

    func testADecodedBodySaysSo() {
        let text = screen(state(source: nil, clientHeaders: [], phases: nil), after: "g", "enter", "2")
        XCTAssertTrue(text.contains("(decoded by the client)"), text)
    }

    func testTheTimingTabShowsThePathAndTheClientsPhases() {
        let phases = TransferPhases(dns: 0.002, connect: 0.001, tls: 0.008, wait: 0.030, receive: 0.004, source: "libcurl")
        let text = screen(state(source: CaptureSource(client: .urlSession, path: .resent), clientHeaders: [], phases: phases),
                          after: "g", "enter", "3")
        XCTAssertTrue(text.contains("Captured      URLSession, re-sent"), text)
        XCTAssertTrue(text.contains("Phases (measured by libcurl)"), text)
        for (name, value) in [("dns", "2.0 ms"), ("connect", "1.0 ms"), ("tls", "8.0 ms"), ("wait", "30.0 ms"), ("receive", "4.0 ms")] {
            XCTAssertTrue(text.split(separator: "\n").contains { $0.hasPrefix(name) && $0.contains(value) }, "\(name) \(value)\n\(text)")
        }
        XCTAssertFalse(text.split(separator: "\n").contains { $0.hasPrefix("blocked") }, "an unknown phase is not drawn")
    }

    func testAHeaderFilterMatchesTheClientsFields() throws {
        var log = Fixtures.started(1)
        XCTAssertFalse(try FilterExpression.parse("~hq user-agent").matches(log))
        log.request.clientHeaders = added
        XCTAssertTrue(try FilterExpression.parse("~hq user-agent").matches(log))
        XCTAssertFalse(try FilterExpression.parse("~hs user-agent").matches(log))
    }
}

/// A flow that traffic rules changed says so in its Request tab.
final class FlowChangesDetailTests: XCTestCase {
    func testAMappedFlowShowsTheAppsURLAndTheRule() {
        var log = Fixtures.started(1, url: "http://127.0.0.1:8080/v1/items")
        log.changes = FlowChanges(rules: ["map-remote |api.example.com|127.0.0.1:8080"], originalURL: "https://api.example.com/v1/items",
                                  originalHeaders: [HTTPHeader(name: "X-Env", value: "prod")])
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(log)]), at: Fixtures.epoch))
        state.press("g", "enter")
        let text = Renderer.render(state, size: Size(width: 100, height: 30)).text
        XCTAssertTrue(text.contains("Mapped the app asked for https://api.example.com/v1/items"), text)
        XCTAssertTrue(text.contains("Edited headers: added Accept; removed X-Env"), text)
        XCTAssertTrue(text.contains("rule map-remote |api.example.com|127.0.0.1:8080"), text)
    }

    func testAMockedFlowSaysNothingWentOnTheNetwork() {
        var log = Fixtures.started(1)
        log.changes = FlowChanges(rules: ["map-local |/items|./items.json"], mockedFrom: "./items.json")
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(log)]), at: Fixtures.epoch))
        state.press("g", "enter")
        let text = Renderer.render(state, size: Size(width: 100, height: 30)).text
        XCTAssertTrue(text.contains("Mocked answered from ./items.json; nothing went on the network"), text)
    }
}

extension FlowChangesDetailTests {
    func testTheListMarksFlowsARuleChanged() {
        var mapped = Fixtures.started(1, url: "http://127.0.0.1:8080/v1/mapped")
        mapped.changes = FlowChanges(rules: ["map-remote |a|b"], originalURL: "https://api.example.com/v1/mapped")
        var mocked = Fixtures.started(2, url: "https://api.example.com/v1/mocked")
        mocked.changes = FlowChanges(rules: ["map-local |a|b"], mockedFrom: "./b")
        var edited = Fixtures.started(3, url: "https://api.example.com/v1/edited")
        edited.changes = FlowChanges(rules: ["modify-headers /X/1"], originalHeaders: [])
        let plain = Fixtures.started(4, url: "https://api.example.com/v1/plain")
        var replayed = Fixtures.started(5, url: "https://api.example.com/v1/replayed")
        replayed.changes = FlowChanges(rules: [], replayOf: Fixtures.id(4))
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [mapped, mocked, edited, plain, replayed].map { .flowStarted($0) }),
                                          at: Fixtures.epoch))
        let lines = Renderer.render(state, size: Size(width: 120, height: 20)).text.split(separator: "\n")
        func row(_ path: String) -> String { String(lines.first { $0.contains(path) } ?? "") }
        XCTAssertTrue(row("/v1/mapped").contains("→ /v1/mapped"), row("/v1/mapped"))
        XCTAssertTrue(row("/v1/mocked").contains("≡ /v1/mocked"), row("/v1/mocked"))
        XCTAssertTrue(row("/v1/edited").contains("± /v1/edited"), row("/v1/edited"))
        XCTAssertTrue(row("/v1/replayed").contains("↻ /v1/replayed"), row("/v1/replayed"))
        XCTAssertFalse(row("/v1/plain").contains("→") || row("/v1/plain").contains("≡") || row("/v1/plain").contains("±"))
    }
}
