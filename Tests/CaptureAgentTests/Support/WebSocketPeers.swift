// Built with the Hummingbird or Vapor trait (both on by default; Package.swift).
#if Hummingbird || Vapor
import CaptureAgent
import Foundation
import Logging
import TestSupport
import WireProtocol
#if Hummingbird
import CaptureAgentHummingbird
import Hummingbird
import HummingbirdWebSocket
#endif
#if Vapor
import CaptureAgentVapor
import Vapor
#endif

/// The WebSocket servers whose connections the agent captures, each serving
/// the same route: `/echo` greets with the text `welcome`, then echoes every
/// text and binary message; pings are answered by the framework. The
/// Hummingbird one also serves `/whoami`: the flow its handler runs in
/// (`none` outside one), then a close.
enum WebSocketServer: String, CaseIterable, Sendable {
    #if Hummingbird
    case hummingbird
    #endif
    #if Vapor
    case vapor
    #endif

    var recordedClient: CaptureSource.Client {
        switch self {
        #if Hummingbird
        case .hummingbird: .hummingbird
        #endif
        #if Vapor
        case .vapor: .vapor
        #endif
        }
    }

    /// Starts the echo route on 127.0.0.1 (a free port), captured into
    /// `agent` when one is given; returns the port and how to stop it.
    func start(captureInto agent: CaptureAgent?) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        switch self {
        #if Hummingbird
        case .hummingbird: try await Self.hummingbird(captureInto: agent)
        #endif
        #if Vapor
        case .vapor: try await Self.vapor(captureInto: agent)
        #endif
        }
    }

    #if Hummingbird
    private static func hummingbird(captureInto agent: CaptureAgent?) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/echo") { inbound, outbound, _ in
            try await outbound.write(.text("welcome"))
            for try await message in inbound.messages(maxSize: 1 << 20) {
                switch message {
                case .text(let text): try await outbound.write(.text(text))
                case .binary(let bytes): try await outbound.write(.binary(bytes))
                }
            }
        }
        router.ws("/whoami") { _, outbound, _ in
            try await outbound.write(.text(CaptureAgent.currentInboundFlowID?.description ?? "none"))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let configuration = ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0))
        let logger = Logger(label: "websocket-echo", factory: { _ in SwiftLogNoOpLogHandler() })
        let running: @Sendable (any Channel) async -> Void = { channel in continuation.yield(channel.localAddress?.port ?? 0) }
        let app = if let agent {
            Application(router: Router(context: BasicWebSocketRequestContext.self),
                        server: .http1WebSocketUpgrade(webSocketRouter: router, capturedBy: agent),
                        configuration: configuration, onServerRunning: running, logger: logger)
        } else {
            Application(router: Router(context: BasicWebSocketRequestContext.self),
                        server: .http1WebSocketUpgrade(webSocketRouter: router),
                        configuration: configuration, onServerRunning: running, logger: logger)
        }
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw CancellationError() }
        return (port, {
            task.cancel()
            _ = await task.result
        })
    }
    #endif

    #if Vapor
    private static func vapor(captureInto agent: CaptureAgent?) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        let app = try await Application.make(.testing)
        app.logger = Logger(label: "websocket-echo", factory: { _ in SwiftLogNoOpLogHandler() })
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        if let agent { app.middleware.use(InboundCaptureMiddleware(agent: agent), at: .beginning) }
        app.webSocket("echo") { _, ws in
            ws.send("welcome")
            ws.onText { ws, text in ws.send(text) }
            ws.onBinary { ws, bytes in ws.send(Array(bytes.readableBytesView)) }
        }
        try app.server.start()
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        return (port, {
            await app.server.shutdown()
            try? await app.asyncShutdown()
        })
    }
    #endif
}

/// Python's `websockets`, as the peer: the client script and the echo
/// server in Fixtures/.
enum PythonWebSocket {
    private static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// Runs the client script against `url` and returns what it saw (a JSON list).
    static func client(_ url: String) throws -> String {
        let run = try ProgramRun.collect(["/usr/bin/env", "python3", fixtures.appendingPathComponent("ws_client.py").path, url], timeout: 30)
        guard run.status == 0 else { throw ScriptFailed(output: run.output + run.errorOutput) }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Connects to `url` and returns the first message the server sends.
    static func firstMessage(_ url: String) throws -> String {
        let script = "import asyncio\nfrom websockets.asyncio.client import connect\n"
            + "async def main():\n    async with connect('\(url)') as ws:\n        print(await ws.recv())\n"
            + "asyncio.run(main())\n"
        let run = try ProgramRun.collect(["/usr/bin/env", "python3", "-c", script], timeout: 30)
        guard run.status == 0 else { throw ScriptFailed(output: run.output + run.errorOutput) }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Connects to `url`, reads the greeting, has one message echoed, then
    /// cuts the connection without a close frame (a peer that vanished).
    static func cutAfterOneEcho(_ url: String) throws {
        let script = "import asyncio\nfrom websockets.asyncio.client import connect\n"
            + "async def main():\n    ws = await connect('\(url)')\n    await ws.recv()\n    await ws.send('hello')\n"
            + "    await ws.recv()\n    ws.transport.abort()\n"
            + "asyncio.run(main())\n"
        let run = try ProgramRun.collect(["/usr/bin/env", "python3", "-c", script], timeout: 30)
        guard run.status == 0 else { throw ScriptFailed(output: run.output + run.errorOutput) }
    }

    /// The echo server, serving `connections` connections; ``transcripts()``
    /// waits for it to end and returns what each connection received.
    final class EchoServer: @unchecked Sendable {
        let port: Int
        private let process: Process
        private let output: Pipe

        init(connections: Int) throws {
            let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("ws-echo-\(UUID().uuidString)").path
            process = Process()
            output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", fixtures.appendingPathComponent("ws_echo_server.py").path, portFile, "\(connections)"]
            process.standardOutput = output
            try process.run()
            guard eventually(timeout: 20, { FileManager.default.fileExists(atPath: portFile) }),
                  let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) else {
                process.terminate()
                throw ScriptFailed(output: "the echo server never said its port")
            }
            try? FileManager.default.removeItem(atPath: portFile)
            self.port = port
        }

        /// One JSON list per connection, in the order the connections ended.
        func transcripts() throws -> [String] {
            guard eventually(timeout: 20, { !process.isRunning }) else {
                process.terminate()
                throw ScriptFailed(output: "the echo server did not end")
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return text.split(separator: "\n").map(String.init)
        }

        func stop() {
            if process.isRunning { process.terminate() }
        }
    }

    struct ScriptFailed: Error, CustomStringConvertible {
        var output: String
        var description: String { output }
    }
}
#endif
