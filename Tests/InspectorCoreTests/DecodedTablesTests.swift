import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// Query, cookie and Set-Cookie tables, decoded, and what the Timing tab
/// says of the connection.
final class DecodedTablesTests: XCTestCase {
    private func detail(_ log: NetworkLog, finished: FlowFinished? = nil, tab: String) -> String {
        var state = AppState(size: Size(width: 120, height: 50), timeZone: Fixtures.utc)
        let messages: [Message] = [.flowStarted(log)] + (finished.map { [.flowFinished($0)] } ?? [])
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        state.press("enter", tab)
        return Renderer.render(state, size: state.size).text
    }

    func testTheRequestTabShowsQueryAndCookiesDecoded() {
        let log = Fixtures.started(1, url: "https://shop.example/search?q=caf%C3%A9+cr%C3%A8me&page=2&flag",
                                   headers: [HTTPHeader(name: "Cookie", value: "session=abc123; theme=dark")])
        let screen = detail(log, tab: "1")
        XCTAssertTrue(screen.contains("Query (3)"), screen)
        XCTAssertTrue(screen.contains("q     café crème"), screen)
        XCTAssertTrue(screen.contains("page  2"), screen)
        XCTAssertTrue(screen.contains("Cookies (2)"), screen)
        XCTAssertTrue(screen.contains("session  abc123"), screen)
    }

    func testTheResponseTabShowsSetCookieWithItsAttributes() {
        var finished = Fixtures.finished(1)
        finished.response?.headers.append(HTTPHeader(name: "Set-Cookie", value: "id=a3fWa; Max-Age=2592000; HttpOnly"))
        let screen = detail(Fixtures.started(1), finished: finished, tab: "2")
        XCTAssertTrue(screen.contains("Set-Cookie (1)"), screen)
        XCTAssertTrue(screen.contains("id  a3fWa  Max-Age=2592000; HttpOnly"), screen)
    }

    func testTheTimingTabSaysWhatTheLogKnowsOfTheConnection() {
        var finished = Fixtures.finished(1)
        finished.timing.phases = TransferPhases(dns: 0.002, connect: 0.010, tls: 0.020, send: 0.001, wait: 0.05, receive: 0.01)
        let screen = detail(Fixtures.started(1), finished: finished, tab: "3")
        XCTAssertTrue(screen.contains("Connection    https://api.example.com:443"), screen)
        XCTAssertTrue(screen.contains("TLS handshake 20.0 ms, new connection, connect 10.0 ms, DNS 2.0 ms"), screen)
    }
}
