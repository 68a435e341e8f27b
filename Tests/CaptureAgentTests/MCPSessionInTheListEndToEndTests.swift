// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import XCTest
@testable import CaptureAgent

/// An MCP session read as a conversation in the real `netinspect` (tmux):
/// a real MCP server (PyPI's `mcp` SDK, streamable HTTP on uvicorn), called
/// through a captured AsyncHTTPClient. While a tool call streams its
/// progress, its row names the tool and counts the progress; then it
/// shows the answer; a result with `isError: true` reads as a tool error.
/// The row said only `/mcp` until the answer came, since the request body
/// (which names the call) reached the viewer only with the flow's end.
final class MCPSessionInTheListEndToEndTests: XCTestCase, @unchecked Sendable {
    private var pane: TmuxSession?
    private var peer: MCPPeer?
    private var client: HTTPClient?

    override func tearDown() {
        try? client?.syncShutdown()
        peer?.stop()
        pane?.kill()
    }

    private func post(_ json: String, session: String?) async throws -> (body: String, session: String?) {
        var request = HTTPClientRequest(url: try XCTUnwrap(peer).url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json, text/event-stream")
        if let session { request.headers.add(name: "Mcp-Session-Id", value: session) }
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await XCTUnwrap(client).execute(request, timeout: .seconds(30))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
        return (body, response.headers.first(name: "mcp-session-id"))
    }

    private static func toolCall(_ id: Int, _ tool: String, _ arguments: String, progress: Bool = false) -> String {
        let meta = progress ? #","_meta":{"progressToken":"p\#(id)"}"# : ""
        return #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"\#(tool)","arguments":\#(arguments)\#(meta)}}"#
    }

    func testAToolCallReadsAsItRunsThenAsItsAnswerAndAToolErrorAsAnError() async throws {
        let peer = try MCPPeer()
        self.peer = peer
        let pane = try TmuxSession(name: #function, width: 160)
        try pane.waitUntilListening()
        self.pane = pane
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) { $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        var configuration = HTTPClient.Configuration()
        agent.capture(&configuration)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

        let (_, id) = try await post(#"""
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"netinspect-test","version":"1"}}}
            """#, session: nil)
        let session = try XCTUnwrap(id, "the server named a session")
        _ = try await post(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, session: session)

        // Eight steps of 0.3 s, progress reported after each.
        let call = Task { try await self.post(Self.toolCall(2, "slow_add", #"{"a":2,"b":3,"steps":8}"#, progress: true), session: session) }
        var screen = try pane.waitFor("⟨tools/call slow_add · ", timeout: 20)
        XCTAssertFalse(screen.contains("slow_add → "), "still running, no answer yet:\n\(screen)")
        XCTAssertTrue(screen.range(of: #"⟨tools/call slow_add · [1-7]/8⟩"#, options: .regularExpression) != nil,
                      "progress counted on the row as it comes:\n\(screen)")
        let answer = try await call.value
        XCTAssertTrue(answer.body.contains(#""structuredContent":{"result":5}"#), answer.body)
        screen = try pane.waitFor("⟨tools/call slow_add → result⟩")

        let failed = try await post(Self.toolCall(3, "divide", #"{"a":1,"b":0}"#), session: session)
        XCTAssertTrue(failed.body.contains(#""isError":true"#), failed.body)
        screen = try pane.waitFor("⟨tools/call divide → tool error⟩")
        XCTAssertFalse(screen.contains("divide → result"), screen)
        XCTAssertTrue(screen.contains("⟨initialize → result⟩"), screen)
        XCTAssertTrue(screen.contains("⟨notifications/initialized⟩"), screen)
        try await client?.shutdown()
        client = nil
    }
}
#endif
