import Foundation
@testable import InspectorCore
import WireProtocol
import XCTest

/// The ten findings of a first hour with `netinspect --demo` (issue 25),
/// one test each, through the UI core: state, reducer and rendered screen.
final class FirstHourFindingsTests: XCTestCase {
    private static let wide = Size(width: 120, height: 30)

    private func screen(_ state: AppState, size: Size = wide) -> String {
        Renderer.render(state, size: size).text
    }

    private func controlledAgent(_ messages: [Message]) -> AppState {
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        let connection = ConnectionID(1)
        _ = Reducer.reduce(&state, .inbox([.connected(connection, hello, peer: "unix")] + messages.map { .message(connection, $0) },
                                          at: Fixtures.epoch))
        return state
    }

    // 1. A replay the agent can no longer make is said at once, and netinspect sends it itself.
    func testReplayOfAFlowOlderThanTheAgentKeepsSaysSoAndNetinspectSendsIt() {
        let count = Reducer.agentReplayDepth + 1
        var state = controlledAgent((1...count).flatMap { [Message.flowStarted(Fixtures.started($0)), .flowFinished(Fixtures.finished($0))] })
        let effect = state.press("g", "r")
        XCTAssertEqual(state.notice?.text.contains("keeps only its last \(Reducer.agentReplayDepth) requests"), true, "\(String(describing: state.notice))")
        guard case .send(let own) = effect else {
            return XCTFail("the oldest flow goes to netinspect's own client: \(effect)")
        }
        XCTAssertEqual(own.replayOf, Fixtures.id(1))
        XCTAssertFalse(own.isEdited)
        state.press("G")
        XCTAssertEqual(state.press("r"), .control(.replay(Fixtures.id(count)), to: ConnectionID(1)), "the newest is still the app's to replay")
    }

    func testARequestBodyTheAgentDoesNotKeepIsSentByNetinspectOnceFilledIn() {
        let size = Reducer.agentReplayBytes + 1
        let upload = Fixtures.started(1, method: "PUT", body: CapturedBody(data: Data(repeating: 0x61, count: 1024), size: size, isTruncated: true))
        var state = controlledAgent([.flowStarted(upload)])
        guard case .edit(let session) = state.press("r"), case .ownReplay = session.purpose else {
            return XCTFail("the agent does not keep it, and the log has only its start")
        }
        XCTAssertTrue(state.notice?.text.contains("does not keep a request body over 16 MiB") == true, "\(String(describing: state.notice))")
        XCTAssertTrue(state.notice?.text.contains("the body (only its start was captured)") == true, "\(String(describing: state.notice))")
    }

    func testAFlowWithARedactedValueOpensTheEditorInsteadOfGuessing() {
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        let secret = Fixtures.started(1, headers: [HTTPHeader(name: "Authorization", value: "<redacted>")])
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(secret), .flowFinished(Fixtures.finished(1))]),
                                          at: Fixtures.epoch))
        guard case .edit(let session) = state.press("r"), case .ownReplay = session.purpose else {
            return XCTFail("a redacted header must be filled in by the person")
        }
        XCTAssertTrue(state.notice?.text.contains("the redacted Authorization") == true, "\(String(describing: state.notice))")
        let left = Reducer.reduce(&state, .edited(session, text: session.text.replacingOccurrences(of: "HTTP/1.1\n", with: "HTTP/1.1\nX-Extra: 1\n"), failure: nil))
        XCTAssertEqual(left, .none, "the marker is still there: nothing is sent")
        XCTAssertTrue(state.notice?.isError == true && state.notice?.text.contains("never guesses") == true, "\(String(describing: state.notice))")
        let filled = session.text.replacingOccurrences(of: "<redacted>", with: "Bearer mine")
        guard case .send(let own) = Reducer.reduce(&state, .edited(session, text: filled, failure: nil)) else {
            return XCTFail("once filled in, netinspect sends it")
        }
        XCTAssertEqual(own.request.headers.first("Authorization"), "Bearer mine")
        XCTAssertTrue(own.isEdited)
    }

    // 2. Killed after the response arrived: cancelled in the list, the title and --dump alike.
    func testAFlowKilledAfterItsResponseArrivedReadsCancelledEverywhere() {
        var killed = Fixtures.finished(1, status: 201)
        killed.state = .cancelled
        killed.error = FlowError(domain: "NSURLErrorDomain", code: -999, message: "The operation could not be completed. (NSURLErrorDomain error -999.)")
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1, method: "POST")), .flowFinished(killed)]),
                                          at: Fixtures.epoch))
        let list = screen(state)
        XCTAssertTrue(list.contains(" CXL "), list)
        XCTAssertFalse(list.contains(" 201 "), "a code reads as success:\n\(list)")
        state.press("enter", "2")
        let detail = screen(state)
        XCTAssertTrue(detail.split(separator: "\n")[0].hasSuffix("CXL"), detail)
        XCTAssertTrue(detail.contains("Cancelled: the app got a cancellation error, not this response"), detail)
        XCTAssertFalse(detail.contains("NSURLErrorDomain error -999"), "8: a kill is said in words:\n\(detail)")
        var log = Fixtures.started(1, method: "POST")
        log.apply(killed)
        XCTAssertTrue(DumpFormat.line(log, in: Fixtures.utc).contains(" CXL "), DumpFormat.line(log, in: Fixtures.utc))
    }

    // 3. Sort by time is by start time, whatever order a file holds the flows in.
    func testTimeOrderFollowsStartTimesNotFileOrder() {
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        let fileOrder = [3, 1, 2]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: fileOrder.map { .flowStarted(Fixtures.started($0)) }), at: Fixtures.epoch))
        let started = { (state: AppState) in state.rows.map { state.session.store[$0]!.log.id } }
        XCTAssertEqual(started(state), [1, 2, 3].map(Fixtures.id))
        state.press("v")
        XCTAssertEqual(started(state), [3, 2, 1].map(Fixtures.id))
    }

    // 4. Filters and search match the URL as the list shows it, and still the raw form.
    func testFilterAndSearchMatchTheDecodedURL() {
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        let url = "http://127.0.0.1:8765/api/search?q=caf%C3%A9+cr%C3%A8me"
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1, url: url)),
                                                                         .flowStarted(Fixtures.started(2))]), at: Fixtures.epoch))
        XCTAssertTrue(screen(state).contains("/api/search?q=café crème"), screen(state))
        for (key, text) in [("f", "café"), ("f", "~u café crème"), ("/", "café"), ("f", "~u caf%C3%A9")] {
            state.press("c")
            state.enter(text, after: key)
            XCTAssertEqual(state.rows.count, 1, "\(key) \(text)")
        }
        state.press("c")
        state.enter("~u nothing-like-it", after: "f")
        XCTAssertEqual(state.rows.count, 0)
        var forms = Fixtures.mixedState()
        forms.enter("~bq Zoë", after: "f")
        XCTAssertEqual(forms.rows.count, 1, "a form body matches as decoded")
    }

    // 5. A header only the other flow has is drawn under "other".
    func testDiffDrawsAnAddedHeaderUnderOther() {
        let base = Fixtures.started(1, headers: [HTTPHeader(name: "Accept", value: "text/html")])
        let other = Fixtures.started(2, headers: [HTTPHeader(name: "Accept", value: "application/json"), HTTPHeader(name: "X-Added", value: "yes")])
        let lines = FlowDiff(base: base, other: other).lines(width: 100).map(\.text)
        let heading = lines.firstIndex { $0.contains("Request headers") }!
        let columns = lines[(heading + 1)...].first { $0.contains("base") && $0.contains("other") }!
        let added = lines[(heading + 1)...].first { $0.hasPrefix("+ X-Added") }!
        let otherColumn = columns.distance(from: columns.startIndex, to: columns.range(of: "other")!.lowerBound)
        let valueColumn = added.distance(from: added.startIndex, to: added.range(of: "yes")!.lowerBound)
        XCTAssertEqual(valueColumn, otherColumn, "\(columns)\n\(added)")
    }

    // 7. A hold is its own phase of the waterfall, not sending time.
    func testHoldTimeIsItsOwnPhase() {
        var finished = Fixtures.finished(1, duration: 25.2)
        finished.timing.requestSent = 25.05
        finished.timing.firstResponseByte = 25.1
        let id = Fixtures.id(1)
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1)),
                                                                         .held(FlowHold(id: id, phase: .request, timeout: 60))]),
                                          at: Fixtures.epoch))
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .released(FlowRelease(id: id, phase: .request, reason: .resumed))),
                                           .message(ConnectionID(1), .flowFinished(finished))], at: Fixtures.epoch.addingTimeInterval(25)))
        state.press("enter", "3")
        let timing = screen(state)
        let line = { (name: String) in timing.split(separator: "\n").first { $0.hasPrefix(name) }.map(String.init) ?? "" }
        XCTAssertTrue(line("held ").hasSuffix("25.0 s"), timing)
        XCTAssertTrue(line("sending ").hasSuffix("50.0 ms"), timing)
    }

    // 8. The texts of the first hour.
    func testRulesViewAndInterceptSpeakOfAppsInGoodEnglish() {
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: []), at: Fixtures.epoch))
        state.press("R")
        XCTAssertTrue(screen(state).contains("the connected app does not allow control"), screen(state))
        state.press("q", "i")
        state.type("~m POST")
        state.press("enter")
        XCTAssertTrue(state.notice?.text.contains("1 app without control ignores it") == true, "\(String(describing: state.notice))")
    }

    func testEditNotesNameHeadersAndTheOriginalAnswerBriefly() {
        let request = Request(method: "GET", url: "https://x/", headers: [HTTPHeader(name: "Accept", value: "a"), HTTPHeader(name: "X-New", value: "b")])
        let changes = FlowChanges(rules: [], originalHeaders: [HTTPHeader(name: "Accept", value: "z"), HTTPHeader(name: "Cookie", value: String(repeating: "c", count: 300))],
                                  originalResponse: Response(statusCode: 201))
        let text = DetailContent.changeLines(changes, request: request).map(\.text).joined(separator: "\n")
        XCTAssertTrue(text.contains("Edited headers: added X-New; removed Cookie; changed Accept"), text)
        XCTAssertTrue(text.contains("Edited response: the server answered 201 Created"), text)
        XCTAssertFalse(text.contains("ccc"), "values stay out of the summary:\n\(text)")
    }

    func testAHeldResponseIsNotStillBeingReceived() {
        let id = Fixtures.id(1)
        let response = Response(statusCode: 200, headers: [], body: CapturedBody(data: Data("done".utf8)))
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [
            .flowStarted(Fixtures.started(1)),
            .flowResponse(FlowResponse(id: id, response: response, timing: Timing(startedAt: Fixtures.epoch))),
            .held(FlowHold(id: id, phase: .response, response: response, timeout: 60)),
        ]), at: Fixtures.epoch))
        state.press("enter", "2")
        XCTAssertTrue(screen(state).contains("HTTP 200 OK"), screen(state))
        XCTAssertFalse(screen(state).contains("receiving body"), screen(state))
    }

    func testViewingAFileSaysFileNotAgent() {
        var state = AppState(size: Self.wide, timeZone: Fixtures.utc)
        let hello = Hello(agentName: Session.fileAgentName, agentVersion: "", appName: "shop.har", processID: 0, hostName: "h")
        _ = Reducer.reduce(&state, .inbox([.connected(.file, hello, peer: "shop.har"), .message(.file, .flowStarted(Fixtures.started(1)))],
                                          at: Fixtures.epoch))
        let bar = screen(state).split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(bar.contains("file: shop.har"), bar)
        XCTAssertFalse(bar.contains("agent"), bar)
    }

    func testHelpShowsWholeCommandNames() {
        var state = AppState(size: Size(width: 160, height: 200), timeZone: Fixtures.utc)
        state.press("?")
        let help = screen(state, size: Size(width: 160, height: 200))
        XCTAssertTrue(help.contains(":filter.httpErrors "), help)
        XCTAssertTrue(help.contains(":intercept.toggle "), help)
    }

    // 9. Columns do not follow the rows on screen; the path has room at 80 columns; the host shows its port.
    func testColumnsStayPutWhileScrollingAndThePathHasRoom() {
        var state = AppState(size: .minimum, timeZone: Fixtures.utc)
        let messages = (1...60).flatMap { number -> [Message] in
            let host = number <= 30 ? "a.example" : "a-much-longer-host-name.example.com:8443"
            return [.flowStarted(Fixtures.started(number, url: "https://\(host)/p/\(number)")), .flowFinished(Fixtures.finished(number))]
        }
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        state.press("g")
        let top = screen(state, size: .minimum).split(separator: "\n")[0]
        state.press("G")
        let bottom = screen(state, size: .minimum)
        XCTAssertEqual(top, bottom.split(separator: "\n")[0], "the header moved")
        let columns = Renderer.columns(ListColumn.standard.filter { $0 != .app }, width: 79)
        XCTAssertGreaterThanOrEqual(columns.first { $0.kind == .path }?.width ?? 0, 20, "\(columns)")
        XCTAssertNil(columns.first { $0.kind == .type }, "the type gives way before the path: \(columns)")
        XCTAssertTrue(bottom.contains("a-much-longer-ho"), bottom)
        XCTAssertEqual(Format.hostAndPort(of: "https://user@Host.example:8443/x"), "host.example:8443")
        XCTAssertNil(Format.hostAndPort(of: "https://[::1]/x"))
        XCTAssertEqual(Format.hostAndPort(of: "http://[::1]:8080/x"), "[::1]:8080")
    }
}
