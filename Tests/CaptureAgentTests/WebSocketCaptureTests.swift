// Built with the Hummingbird or Vapor trait (both on by default; Package.swift).
#if Hummingbird || Vapor
import Foundation
import NIOCore
import NIOPosix
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent
#if Vapor
import CaptureAgentVapor
import Vapor
#endif

/// WebSocket connections, captured on each side by each framework, against
/// real peers on loopback (Python's `websockets`): every message, ping,
/// pong and close is an event of the upgrade's flow, and the peer sees the
/// same frames with capture as without.
final class WebSocketCaptureTests: AgentTestCase, @unchecked Sendable {
    /// One message of a flow, as a test reads it.
    private struct Seen: Equatable, CustomStringConvertible {
        var direction: StreamDirection
        var opcode: WebSocketOpcode
        var text: String
        var size: Int
        var closeCode: Int?

        init(_ direction: StreamDirection, _ opcode: WebSocketOpcode, _ text: String, size: Int? = nil, closeCode: Int? = nil) {
            self.direction = direction
            self.opcode = opcode
            self.text = text
            self.size = size ?? text.utf8.count
            self.closeCode = closeCode
        }

        init(_ message: WebSocketMessage) {
            self.init(message.direction, message.opcode,
                      message.opcode == .binary ? "" : String(decoding: message.body.data, as: UTF8.self),
                      size: message.body.size, closeCode: message.closeCode)
        }

        var description: String { "\(direction) \(opcode) \(text.debugDescription) \(size)\(closeCode.map { " \($0)" } ?? "")" }
    }

    private func finishedFlow(_ suffix: String) async -> NetworkLog? {
        var found: NetworkLog?
        _ = await waitUntil { found = self.inspector.finishedFlows(urlSuffix: suffix).last; return found != nil }
        return found
    }

    func testPythonClientsAgainstEachServerSeeTheSameFramesAndEveryFrameIsAnEvent() async throws {
        for server in WebSocketServer.allCases {
            let plain = try await server.start(captureInto: nil), captured = try await server.start(captureInto: agent)
            let without = try PythonWebSocket.client("ws://127.0.0.1:\(plain.port)/echo")
            let with = try PythonWebSocket.client("ws://127.0.0.1:\(captured.port)/echo")
            await plain.stop()
            await captured.stop()
            XCTAssertEqual(with, without, "\(server): the client saw different frames with capture on")
            XCTAssertTrue(without.hasPrefix(#"[["text", "welcome"], ["text", "hello"]"#), "\(server): \(without)")
            XCTAssertTrue(without.contains(#"["pong"], ["close", "#), "\(server): \(without)")

            let found = await finishedFlow("127.0.0.1:\(captured.port)/echo")
            let flow = try XCTUnwrap(found, "\(server)")
            XCTAssertEqual(flow.request.method, "GET", "\(server)")
            XCTAssertEqual(flow.request.url, "ws://127.0.0.1:\(captured.port)/echo", "\(server)")
            XCTAssertEqual(flow.direction, .inbound, "\(server)")
            XCTAssertEqual(flow.source?.client, server.recordedClient, "\(server)")
            XCTAssertTrue(flow.peer?.hasPrefix("127.0.0.1:") ?? false, "\(server): \(flow.peer ?? "no peer")")
            XCTAssertEqual(flow.response?.statusCode, 101, "\(server)")
            XCTAssertNotNil(flow.response?.headers.first("Sec-WebSocket-Accept"), "\(server): the 101 as the client got it")
            XCTAssertEqual(flow.state, .completed, "\(server): closed with a handshake both ways")
            let session = try XCTUnwrap(flow.webSocket, "\(server)")
            XCTAssertEqual(session.droppedMessages, 0, "\(server)")
            let messages = session.messages.map(Seen.init)
            let serverClose = try XCTUnwrap(messages.last, "\(server)")
            XCTAssertEqual(messages, [
                Seen(.response, .text, "welcome"),
                Seen(.request, .text, "hello"), Seen(.response, .text, "hello"),
                Seen(.request, .binary, "", size: 1024), Seen(.response, .binary, "", size: 1024),
                // Sent in three fragments, recorded as the one message the handler read.
                Seen(.request, .text, "fragmented message"), Seen(.response, .text, "fragmented message"),
                Seen(.request, .ping, "p1"), Seen(.response, .pong, "p1"),
                Seen(.request, .close, "bye", closeCode: 4000), serverClose,
            ], "\(server)")
            XCTAssertEqual(serverClose.direction, .response, "\(server)")
            XCTAssertEqual(serverClose.opcode, .close, "\(server)")
            XCTAssertEqual(session.close?.closeCode, 4000, "\(server): the first close frame")
            let binary = try XCTUnwrap(session.messages.first { $0.opcode == .binary })
            XCTAssertEqual(binary.body.data, Data((0..<1024).map { UInt8($0 % 256) }), "\(server): a client's masked payload, unmasked")
            let times = session.messages.map(\.at)
            XCTAssertEqual(times, times.sorted(), "\(server): messages in the order they went by")
        }
    }

    func testAConnectionCutWithoutACloseHandshakeEndsFailed() async throws {
        for server in WebSocketServer.allCases {
            let captured = try await server.start(captureInto: agent)
            try PythonWebSocket.cutAfterOneEcho("ws://127.0.0.1:\(captured.port)/echo")
            let found = await finishedFlow("127.0.0.1:\(captured.port)/echo")
            await captured.stop()
            let flow = try XCTUnwrap(found, "\(server)")
            XCTAssertEqual(flow.state, .failed, "\(server)")
            XCTAssertNotNil(flow.error, "\(server)")
            let messages = try XCTUnwrap(flow.webSocket, "\(server)").messages
            XCTAssertEqual(messages.prefix(3).map(Seen.init), [
                Seen(.response, .text, "welcome"), Seen(.request, .text, "hello"), Seen(.response, .text, "hello"),
            ], "\(server)")
            // Hummingbird answers the end of input with a close frame of its
            // own, which the log keeps; none came from the vanished client.
            XCTAssertFalse(messages.contains { $0.direction == .request && $0.opcode == .close }, "\(server)")
        }
    }

    #if Hummingbird
    func testAHummingbirdWebSocketHandlerRunsInsideItsFlow() async throws {
        let plain = try await WebSocketServer.hummingbird.start(captureInto: nil)
        let captured = try await WebSocketServer.hummingbird.start(captureInto: agent)
        let outside = try PythonWebSocket.firstMessage("ws://127.0.0.1:\(plain.port)/whoami")
        let inside = try PythonWebSocket.firstMessage("ws://127.0.0.1:\(captured.port)/whoami")
        await plain.stop()
        await captured.stop()
        XCTAssertEqual(outside, "none")
        let found = await finishedFlow("127.0.0.1:\(captured.port)/whoami")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(inside, flow.id.description, "calls the handler makes name the WebSocket flow as their parent")
        XCTAssertEqual(flow.webSocket?.messages.first.map(Seen.init), Seen(.response, .text, flow.id.description))
    }
    #endif

    #if Vapor
    /// websocket-kit's client (Vapor's `WebSocket.connect`) against a Python
    /// server: a text, a binary message, a ping, then a close with 4001.
    private func converse(_ url: String, capturedBy agent: CaptureAgent?) async throws -> [String] {
        let group = MultiThreadedEventLoopGroup.singleton
        let seen = Locked<[String]>([])
        let closed = group.any().makePromise(of: Void.self)
        let socket = Locked<WebSocket?>(nil)
        let onUpgrade: @Sendable (WebSocket) -> Void = { ws in
            socket.withLock { $0 = ws }
            ws.onText { ws, text in
                seen.withLock { $0.append("text \(text)") }
                ws.send(Array(0..<200) as [UInt8])
            }
            ws.onBinary { ws, bytes in
                seen.withLock { $0.append("binary \(bytes.readableBytes)") }
                ws.sendPing(Data("p1".utf8))
            }
            ws.onPong { ws, data in
                seen.withLock { $0.append("pong \(String(buffer: data))") }
                ws.close(code: .init(codeNumber: 4001), promise: nil)
            }
            ws.onClose.cascade(to: closed)
            ws.send("hello")
        }
        if let agent {
            try await WebSocket.connect(to: url, on: group, capturedBy: agent, onUpgrade: onUpgrade).get()
        } else {
            try await WebSocket.connect(to: url, on: group, onUpgrade: onUpgrade).get()
        }
        try await closed.futureResult.get()
        let code = socket.withLock { $0?.closeCode }
        return seen.current + ["close \(code.map { "\($0)" } ?? "none")"]
    }

    func testWebSocketKitClientAgainstAPythonServerIsRecordedAndTheServerSeesTheSameFrames() async throws {
        let server = try PythonWebSocket.EchoServer(connections: 2)
        defer { server.stop() }
        let without = try await converse("ws://127.0.0.1:\(server.port)/plain", capturedBy: nil)
        let with = try await converse("ws://127.0.0.1:\(server.port)/captured", capturedBy: agent)
        XCTAssertEqual(with, without, "the app saw different frames with capture on")
        XCTAssertEqual(without.first, "text hello")
        let transcripts = try server.transcripts()
        XCTAssertEqual(transcripts.count, 2)
        XCTAssertEqual(transcripts.first, transcripts.last, "the server saw different frames with capture on")
        XCTAssertTrue(transcripts.first?.contains(#"["close", 4001, ""]"#) ?? false, transcripts.first ?? "")

        let found = await finishedFlow("/captured")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.request.url, "ws://127.0.0.1:\(server.port)/captured")
        XCTAssertEqual(flow.source?.client, .websocketKit)
        XCTAssertNil(flow.direction)
        XCTAssertEqual(flow.response?.statusCode, 101)
        XCTAssertTrue(flow.localAddress?.hasPrefix("127.0.0.1:") ?? false, flow.localAddress ?? "no local address")
        XCTAssertEqual(flow.state, .completed)
        let messages = try XCTUnwrap(flow.webSocket).messages.map(Seen.init)
        XCTAssertEqual(messages, [
            Seen(.request, .text, "hello"), Seen(.response, .text, "hello"),
            Seen(.request, .binary, "", size: 200), Seen(.response, .binary, "", size: 200),
            Seen(.request, .ping, "p1"), Seen(.response, .pong, "p1"),
            Seen(.request, .close, "", closeCode: 4001), Seen(.response, .close, "", closeCode: 4001),
        ])
        XCTAssertNil(inspector.finishedFlows(urlSuffix: "/plain").first, "an uncaptured connection is not recorded")
    }
    #endif
}
#endif

#if Hummingbird || Vapor
/// Connections a captured server accepts while no inspector listens build
/// nothing and count every event they would have sent as dropped.
final class WebSocketCaptureWithoutInspectorTests: XCTestCase {
    func testEveryEventOfAConnectionIsCountedAsDropped() async throws {
        for server in WebSocketServer.allCases {
            let path = temporarySocketPath("ws-\(server)-nobody")
            let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .unix(path: path)))
            defer { agent.stop() }
            let service = try await server.start(captureInto: agent)
            _ = try PythonWebSocket.client("ws://127.0.0.1:\(service.port)/echo")
            await service.stop()
            // The start, the 101, eleven messages (greeting, three echoed
            // messages each way, ping, pong, a close each way) and the end.
            let counted = await waitUntil { agent.statistics.droppedEvents == 14 }
            XCTAssertTrue(counted, "\(server): dropped \(agent.statistics.droppedEvents)")
        }
    }
}
#endif

#if Hummingbird || Vapor
/// The real `netinspect`, headless, as the agent's viewer: a captured
/// connection's flow comes out with every message it folded in.
final class WebSocketFlowsReachNetinspectTests: XCTestCase {
    func testNetinspectPrintsTheConnectionWithItsMessages() async throws {
        let path = temporarySocketPath("ws-netinspect")
        let inspector = try InspectorProcess(listeningOn: path)
        defer { inspector.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.appName = "ws-echo" })
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        for server in WebSocketServer.allCases {
            let service = try await server.start(captureInto: agent)
            _ = try PythonWebSocket.client("ws://127.0.0.1:\(service.port)/echo")
            await service.stop()
            var flow: NetworkLog?
            _ = await waitUntil {
                flow = inspector.output.split(separator: "\n").compactMap { try? NetworkLog(jsonLine: Array($0.utf8)) }
                    .first { $0.request.url == "ws://127.0.0.1:\(service.port)/echo" }
                return flow != nil
            }
            let printed = try XCTUnwrap(flow, "\(server): \(inspector.output)")
            let messages = try XCTUnwrap(printed.webSocket, "\(server)").messages
            XCTAssertEqual(messages.count, 11, "\(server)")
            XCTAssertEqual(messages.filter { $0.opcode == .close }.first?.closeCode, 4000, "\(server)")
            XCTAssertEqual(messages.filter { $0.opcode == .close }.first?.body.data, Data("bye".utf8), "\(server)")
            XCTAssertEqual(printed.state, .completed, "\(server)")
        }
    }
}
#endif
