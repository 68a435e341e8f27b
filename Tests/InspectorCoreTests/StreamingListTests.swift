import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// A flow whose response is arriving reads apart from one still waiting,
/// with its size so far and the time since its last part; a JSON-RPC call
/// shows its method and answer.
final class StreamingListTests: XCTestCase {
    private func row(_ screen: String, containing text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        guard let row = screen.components(separatedBy: "\n").first(where: { $0.contains(text) }) else {
            XCTFail("no row with \(text) in\n\(screen)", file: file, line: line)
            return ""
        }
        return row
    }

    func testAStreamingFlowShowsItsSizeSoFarAndTheTimeSinceItsLastPart() throws {
        let text = String(repeating: "data: x\n\n", count: 100)
        let messages = StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, text, cuts: [450], firstAt: 0.5, interval: 1)
            + [.flowStarted(Fixtures.started(2, url: "https://api.example.com/v1/waiting"))]
        // Flow 1 started at epoch+1; its last part came at +1.5 s, so 2.5 s into the epoch; now is 4.5 s.
        let state = StreamFixtures.state(messages, now: 4.5)
        let screen = state.screen()
        let streaming = row(screen, containing: "/v1/chat/completions")
        XCTAssertTrue(streaming.contains("900 B"), "the size so far: \(streaming)")
        XCTAssertTrue(streaming.contains("⇣2.00s"), "two seconds since the last part: \(streaming)")
        let waiting = row(screen, containing: "/v1/waiting")
        XCTAssertTrue(waiting.contains("…"), waiting)
        XCTAssertFalse(waiting.contains("⇣"), waiting)
    }

    func testTheDetailTitleSaysStreaming() throws {
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, "data: x\n\n", cuts: []))
        state.press("enter")
        XCTAssertTrue(state.screen().components(separatedBy: "\n")[0].contains("200  ⇣ streaming"), state.screen())
        StreamFixtures.receive([StreamFixtures.finish(1, body: "data: x\n\n")], into: &state)
        XCTAssertFalse(state.screen().contains("⇣ streaming"), "finished: no longer streaming\n\(state.screen())")
    }

    func testTheResponseTabFollowsABodyArrivingInParts() throws {
        let size = Size(width: 100, height: 14)
        var lines = ""
        for number in 1...20 { lines += "line \(number)\n" }
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, lines, cuts: []), size: size)
        state.press("enter", "2")
        StreamFixtures.receive([StreamFixtures.part(1, "line 21\nline 22\nline 23\nline 24\n", offset: lines.utf8.count, at: 2)], into: &state)
        XCTAssertTrue(state.screen(size: size).contains("line 24"), state.screen(size: size))
    }

    func testAJSONRPCCallShowsItsMethodAndItsAnswer() throws {
        func call(_ number: Int, _ body: String) -> Message {
            .flowStarted(Fixtures.started(number, method: "POST", url: "https://mcp.example.com/mcp",
                                          headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                          body: CapturedBody(data: Data(body.utf8))))
        }
        let messages: [Message] = [
            call(1, #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather"}}"#),
            .flowFinished(Fixtures.finished(1, body: #"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#)),
            call(2, #"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#),
            .flowFinished(Fixtures.finished(2, body: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n",
                                            contentType: "text/event-stream")),
            call(3, #"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#),
        ]
        let screen = StreamFixtures.state(messages, size: Size(width: 160, height: 20)).screen(size: Size(width: 160, height: 20))
        XCTAssertTrue(row(screen, containing: "/mcp  ⟨tools/call").contains("⟨tools/call weather → result⟩"), screen)
        XCTAssertTrue(screen.contains("⟨initialize → error -32602⟩"), "the answer read from the event stream:\n\(screen)")
        XCTAssertTrue(screen.contains("⟨notifications/initialized +1⟩"), screen)
    }

    /// An MCP tool call that streams its progress reads as it goes (how far
    /// of how much), then as its answer; a result with `isError: true` reads
    /// as a failure, not as a result.
    func testAToolCallShowsItsProgressWhileItRunsAndAToolErrorAsAnError() throws {
        let size = Size(width: 160, height: 20)
        func call(_ number: Int, _ tool: String) -> Message {
            .flowStarted(Fixtures.started(number, method: "POST", url: "https://mcp.example.com/mcp",
                                          headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                          body: CapturedBody(data: Data(#"{"jsonrpc":"2.0","id":\#(number),"method":"tools/call","params":{"name":"\#(tool)","arguments":{}}}"#.utf8))))
        }
        func progress(_ step: Int, of total: Int) -> String {
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":\(step),\"total\":\(total)}}\n\n"
        }
        var state = StreamFixtures.state([call(1, "slow_add")] + StreamFixtures.eventStreamHead(1).dropFirst()
                                         + StreamFixtures.parts(1, progress(1, of: 8) + progress(2, of: 8) + progress(3, of: 8), cuts: []), size: size)
        XCTAssertTrue(state.screen(size: size).contains("⟨tools/call slow_add · 3/8⟩"), state.screen(size: size))
        let error = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[],\"isError\":true}}\n\n"
        StreamFixtures.receive([call(2, "nope"), .flowFinished(Fixtures.finished(2, body: error, contentType: "text/event-stream"))], into: &state)
        let screen = state.screen(size: size)
        XCTAssertTrue(screen.contains("⟨tools/call nope → tool error⟩"), screen)
        XCTAssertFalse(screen.contains("⟨tools/call nope → result⟩"), screen)
    }
}
