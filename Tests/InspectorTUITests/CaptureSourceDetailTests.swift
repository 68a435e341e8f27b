import Foundation
@testable import InspectorCore
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
