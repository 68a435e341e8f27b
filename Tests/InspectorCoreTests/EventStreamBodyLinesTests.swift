import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// The Response tab of a `text/event-stream` flow shows the body's lines as
/// lines, whatever ends them: sse-starlette (MCP's Python SDK, uvicorn
/// services) ends them with CRLF, which Swift reads as one character.
final class EventStreamBodyLinesTests: XCTestCase {
    private func responseTab(body: String) -> [String] {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let messages: [Message] = [.flowStarted(Fixtures.started(1, method: "POST", url: "http://127.0.0.1:8000/mcp")),
                                   .flowFinished(Fixtures.finished(1, body: body, contentType: "text/event-stream"))]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch.addingTimeInterval(10)))
        state.press("enter", "2")
        return state.screen(size: Size(width: 120, height: 40)).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func testEachLineOfACRLFStreamIsALineOfItsOwn() {
        let body = "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n: ping\r\n\r\nevent: message\r\ndata: [DONE]\r\n\r\n"
        let lines = responseTab(body: body)
        let screen = lines.joined(separator: "\n")
        XCTAssertFalse(screen.contains("·"), "no line end shown as a control character:\n\(screen)")
        XCTAssertEqual(lines.filter { $0.trimmingCharacters(in: .whitespaces) == "event: message" }.count, 2, screen)
        XCTAssertTrue(lines.contains { $0.trimmingCharacters(in: .whitespaces) == #"data: {"jsonrpc":"2.0","id":1,"result":{}}"# }, screen)
        XCTAssertTrue(lines.contains { $0.trimmingCharacters(in: .whitespaces) == ": ping" }, screen)
        XCTAssertTrue(lines.contains { $0.trimmingCharacters(in: .whitespaces) == "data: [DONE]" }, screen)
    }

    func testLinesEndedByLFOrCRAloneAreLinesToo() {
        for end in ["\n", "\r"] {
            let lines = responseTab(body: "data: one\(end)\(end)data: two\(end)\(end)")
            XCTAssertTrue(lines.contains { $0.trimmingCharacters(in: .whitespaces) == "data: one" }, lines.joined(separator: "\n"))
            XCTAssertTrue(lines.contains { $0.trimmingCharacters(in: .whitespaces) == "data: two" }, lines.joined(separator: "\n"))
        }
    }
}
