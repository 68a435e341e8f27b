// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import Foundation
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A server's WebSocket reads from the app's side, as GUIDE says of every
/// flow: `→` is what the app sent, `←` what it received, and the close
/// names who closed first. A Hummingbird route captured by the agent, a
/// Python `websockets` client that closes first with 4000 "bye", and the
/// real `netinspect` in tmux and headless.
final class InboundWebSocketWordsEndToEndTests: XCTestCase {
    func testTheMessagesTabOfAServersWebSocketNamesThePeerAsTheOneWhoClosedAndArrowsFromTheAppsSide() async throws {
        let pane = try TmuxSession(name: #function)
        defer { pane.kill() }
        try pane.waitUntilListening()
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) { $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        _ = try pane.waitFor("1 agent")
        let service = try await WebSocketServer.hummingbird.start(captureInto: agent)
        _ = try PythonWebSocket.client("ws://127.0.0.1:\(service.port)/echo")
        await service.stop()

        _ = try pane.waitFor("101")
        pane.send("Enter")
        pane.send("5")
        let screen = try pane.waitFor("WebSocket messages")
        XCTAssertTrue(screen.contains("6 sent, 5 received"), "the app sent the greeting, the echoes, the pong and its close:\n\(screen)")
        XCTAssertTrue(screen.contains("closed by the peer with 4000 “bye”"), "the Python client closed first:\n\(screen)")
        XCTAssertTrue(screen.contains("→ text 1"), "the app's greeting went out:\n\(screen)")
        XCTAssertTrue(screen.contains("← text 1"), "the client's hello came in:\n\(screen)")
    }

    func testMessagesLinesOfAServersWebSocketHaveTheAppsArrows() async throws {
        let path = temporarySocketPath("ws-inbound-arrows")
        let inspector = try InspectorProcess(listen: "unix:\(path)", output: "--dump", arguments: ["--messages"])
        defer { inspector.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        let service = try await WebSocketServer.hummingbird.start(captureInto: agent)
        _ = try PythonWebSocket.client("ws://127.0.0.1:\(service.port)/echo")
        await service.stop()
        let printed = await waitUntil(timeout: 20) { inspector.output.contains(" 101 ") }
        XCTAssertTrue(printed, inspector.output)
        let lines = inspector.output.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.contains("→ text") && $0.contains("welcome") }, "the app's greeting:\n\(inspector.output)")
        XCTAssertTrue(lines.contains { $0.contains("← close") && $0.contains("code 4000") }, "the client's close:\n\(inspector.output)")
    }
}
#endif
