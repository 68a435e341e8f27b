// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgent
import CaptureAgentVapor
import Logging
import Vapor

/// The scenario routes (``InboundFramework``) in a Vapor 4 application,
/// the capture middleware first, before Vapor's own error middleware; plus
/// any a test adds with `routes`.
final class VaporScenarioService: InboundService {
    let port: Int
    let stream: StreamGate
    private let runs: RunCounter
    private let app: Application

    private init(port: Int, stream: StreamGate, runs: RunCounter, app: Application) {
        self.port = port
        self.stream = stream
        self.runs = runs
        self.app = app
    }

    var handlerRuns: Int { runs.value }

    static func start(captureInto agent: CaptureAgent?,
                      routes: (Application) -> Void = { _ in }) async throws -> VaporScenarioService {
        let runs = RunCounter(), stream = StreamGate()
        let app = try await Application.make(.testing)
        app.logger = Logger(label: "scenario-service", factory: { _ in SwiftLogNoOpLogHandler() })
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        app.routes.defaultMaxBodySize = "4mb"
        if let agent { app.middleware.use(InboundCaptureMiddleware(agent: agent), at: .beginning) }
        for method in [HTTPMethod.POST, .PUT] {
            app.on(method, "echo") { request async throws -> Vapor.Response in
                runs.increment()
                var headers = HTTPHeaders()
                headers.add(name: .contentType, value: "text/plain")
                headers.add(name: "X-Method", value: request.method.rawValue)
                headers.add(name: "X-Rule", value: request.headers.first(name: "X-Rule") ?? "none")
                return Vapor.Response(status: .ok, headers: headers, body: .init(buffer: request.body.data ?? ByteBuffer()))
            }
        }
        app.get("text") { _ async -> Vapor.Response in
            runs.increment()
            return Vapor.Response(status: .ok, headers: ["Content-Type": "text/plain", "X-Served": "1"], body: "hello")
        }
        app.get("stream") { _ async -> Vapor.Response in
            runs.increment()
            return Vapor.Response(status: .ok, body: .init(asyncStream: { writer in
                for index in 0..<StreamGate.chunks {
                    stream.writes()
                    try await writer.write(.buffer(ByteBuffer(string: StreamGate.chunk(index))))
                    await stream.waitForTheClient()
                }
                try await writer.write(.end)
            }))
        }
        app.get("refuse") { _ async throws -> String in
            runs.increment()
            throw Abort(.badRequest, reason: "no tea here")
        }
        app.get("boom") { _ async throws -> String in
            runs.increment()
            throw ScenarioError()
        }
        app.get("whoami") { _ async -> String in
            runs.increment()
            return CaptureAgent.currentInboundFlowID?.description ?? "none"
        }
        routes(app)
        try app.server.start()
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        return VaporScenarioService(port: port, stream: stream, runs: runs, app: app)
    }

    /// `req.client` through the agent from now on.
    func useCapturedClient(_ agent: CaptureAgent) async {
        app.clients.use(.captured(by: agent))
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }
}
#endif
