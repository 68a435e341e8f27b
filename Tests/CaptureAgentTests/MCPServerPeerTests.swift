// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol
import XCTest
@testable import CaptureAgent
@testable import CaptureAgentAsyncHTTPClient

/// The streams side of docs/COMPATIBILITY.md: an MCP session (PyPI's `mcp`
/// SDK, streamable HTTP on uvicorn, answers as server-sent events) through
/// a captured AsyncHTTPClient of an app that allows control, compared with
/// the same session without the agent: initialize, the initialized
/// notification, `tools/call add`; then the call held at a breakpoint past
/// uvicorn's 2 s keep-alive.
final class MCPServerPeerTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
        configuration.breakpointTimeout = 60
    }

    /// What the app sees of one exchange: status, content type, and the
    /// JSON-RPC message (the `data:` of the event, or the JSON body).
    private struct Step: Equatable {
        var status: Int
        var contentType: String?
        var message: String?
    }

    private func post(_ client: HTTPClient, _ url: String, session: String?, _ json: String) async throws -> (Step, String?) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json, text/event-stream")
        if let session { request.headers.add(name: "Mcp-Session-Id", value: session) }
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
        let data = body.split(whereSeparator: \.isNewline).first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
        let step = Step(status: Int(response.status.code), contentType: response.headers.first(name: "content-type"),
                        message: data ?? (body.isEmpty ? nil : body))
        return (step, response.headers.first(name: "mcp-session-id"))
    }

    /// One session: the steps the app saw.
    private func session(_ peer: MCPPeer, agent: CaptureAgent?, beforeCall: (() async throws -> Void)? = nil) async throws -> [Step] {
        var configuration = HTTPClient.Configuration()
        agent?.capture(&configuration)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { _ = client.shutdown() }
        let (initialized, id) = try await post(client, peer.url, session: nil, #"""
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"netinspect-test","version":"1"}}}
            """#)
        let sessionID = try XCTUnwrap(id, "the server named a session")
        let (notified, _) = try await post(client, peer.url, session: sessionID, #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        let call = Task { [url = peer.url] in
            try await self.post(client, url + "?call=add", session: sessionID,
                                #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#).0
        }
        try await beforeCall?()
        return [initialized, notified, try await call.value]
    }

    func testAnMCPSessionThroughACapturedAsyncHTTPClientIsWhatItIsWithout() async throws {
        let peer = try MCPPeer()
        defer { peer.stop() }
        let without = try await session(peer, agent: nil)
        XCTAssertEqual(without.last?.status, 200)
        XCTAssertTrue(without.last?.message?.contains(#""text":"5""#) == true, "the tool answered: \(without)")
        let with = try await session(peer, agent: agent)
        XCTAssertEqual(with, without, "the app sees the same session")
        var flows: [NetworkLog] = []
        let recorded = await waitUntil {
            flows = self.inspector.flows.values.filter { $0.state.isFinal && $0.request.url.hasPrefix(peer.url) }
            return flows.count == 3
        }
        XCTAssertTrue(recorded, "three flows: \(flows.map(\.request.url))")
        let call = flows.first { $0.request.url.hasSuffix("call=add") }
        XCTAssertTrue(call?.response?.body.map { String(decoding: $0.data, as: UTF8.self).contains(#""text":"5""#) } == true,
                      "the call's event is recorded")
    }

    func testAToolCallHeldPastUvicornsKeepAliveGetsItsAnswer() async throws {
        let peer = try MCPPeer()
        defer { peer.stop() }
        let without = try await session(peer, agent: nil)
        intercept("~u call=add & ~q")
        let with = try await session(peer, agent: agent) {
            var held: FlowHold?
            let found = await waitUntil {
                held = self.inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                    guard case .held(let hold) = message, hold.phase == .request else { return nil }
                    return hold
                }.first
                return held != nil
            }
            XCTAssertTrue(found, "the call is held")
            // A person reading the call: past uvicorn's 2 s keep-alive, which
            // has passed once it has closed the connection the app kept open.
            let closed = await waitUntil(timeout: 20) { !TCPSockets.anyEstablished(toPort: peer.port) }
            XCTAssertTrue(closed, "uvicorn never closed the kept-alive connection")
            if let held { self.sendAsViewer(.resume(FlowResume(id: held.id))) }
        }
        XCTAssertEqual(with, without, "released, the call gets its answer")
    }
}
#endif
