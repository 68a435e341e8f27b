// Built with the Hummingbird or Vapor trait (both on by default; Package.swift),
// for the Python peer the WebSocket tests share.
#if Hummingbird || Vapor
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// `URLSessionWebSocketTask` on this toolchain (docs/AGENT.md,
/// "`URLSessionWebSocketTask` on Linux"): corelibs' FoundationNetworking is
/// built without libcurl's WebSocket API
/// (`CFURLSessionWebSocketsSupported()` is false; no `curl_ws_*` import), so
/// `resume()` fails every WebSocket task with `NSURLErrorUnsupportedURL`
/// before any connection, with or without the agent. The agent records
/// nothing of it (its protocol takes only http and https, and the task never
/// reaches a protocol); WebSocket capture on Linux is for NIO clients. If a
/// toolchain gains WebSocket support this test fails, and capture through
/// URLSession needs a new look: corelibs sends a task's frames only through
/// its own `_WebSocketURLProtocol`, which a URLProtocol cannot stand in for.
final class URLSessionWebSocketTaskOnLinuxTests: AgentTestCase, @unchecked Sendable {
    func testAWebSocketTaskFailsUnsupportedBeforeConnectingWithOrWithoutCapture() async throws {
        let server = try PythonWebSocket.EchoServer(connections: 1)
        defer { server.stop() }
        for captured in [false, true] {
            let session = URLSession(configuration: sessionConfiguration(captured: captured))
            defer { session.invalidateAndCancel() }
            let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/chat?captured=\(captured)")!)
            task.resume()
            do {
                try await task.send(.string("hello"))
                XCTFail("captured \(captured): a WebSocket task sent a message on this toolchain")
            } catch {
                XCTAssertEqual((error as? URLError)?.code, .unsupportedURL, "captured \(captured): \(error)")
            }
        }
        // The server's one connection is the Python client's: no task reached it.
        let script = "import asyncio\nfrom websockets.asyncio.client import connect\n"
            + "async def main():\n    async with connect('ws://127.0.0.1:\(server.port)/check') as ws:\n        await ws.send('hi')\n"
            + "asyncio.run(main())\n"
        XCTAssertEqual(try ProgramRun.collect(["/usr/bin/env", "python3", "-c", script], timeout: 30).status, 0)
        XCTAssertEqual(try server.transcripts().count, 1)
        XCTAssertTrue(inspector.flows.values.allSatisfy { !$0.request.url.contains("/chat") }, "the agent recorded a task that never ran")
    }
}
#endif
