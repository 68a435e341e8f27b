// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import CaptureAgentHummingbird
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TestSupport

/// The scenario routes (``InboundFramework``) in a Hummingbird 2 service,
/// plus any a test adds with `routes`, and `GET /slow`: 200 and a body that
/// takes seconds to write (`ClientGoneMidResponseTests`).
final class HummingbirdScenarioService: InboundService {
    let port: Int
    let stream: StreamGate
    private let runs: RunCounter
    private let task: Task<Void, any Error>

    private init(port: Int, stream: StreamGate, runs: RunCounter, task: Task<Void, any Error>) {
        self.port = port
        self.stream = stream
        self.runs = runs
        self.task = task
    }

    var handlerRuns: Int { runs.value }

    static func start(captureInto agent: CaptureAgent?,
                      routes: (Router<PeerContext>) -> Void = { _ in }) async throws -> HummingbirdScenarioService {
        let runs = RunCounter(), stream = StreamGate()
        let router = Router(context: PeerContext.self)
        if let agent { router.add(middleware: InboundCaptureMiddleware(agent: agent)) }
        routes(router)
        let echo: @Sendable (Request, PeerContext) async throws -> Response = { request, _ in
            runs.increment()
            let body = try await request.body.collect(upTo: 1 << 22)
            return Response(status: .ok, headers: [
                .contentType: "text/plain",
                HTTPField.Name("X-Method")!: request.method.rawValue,
                HTTPField.Name("X-Rule")!: request.headers[HTTPField.Name("X-Rule")!] ?? "none",
            ], body: .init(byteBuffer: body))
        }
        router.on("echo", method: .post, use: echo)
        router.on("echo", method: .put, use: echo)
        router.get("text") { _, _ in
            runs.increment()
            return Response(status: .ok, headers: [.contentType: "text/plain", HTTPField.Name("X-Served")!: "1"],
                            body: .init(byteBuffer: ByteBuffer(string: "hello")))
        }
        router.get("stream") { _, _ in
            runs.increment()
            return Response(status: .ok, body: ResponseBody { writer in
                for index in 0..<StreamGate.chunks {
                    stream.writes()
                    try await writer.write(ByteBuffer(string: StreamGate.chunk(index)))
                    await stream.waitForTheClient()
                }
                try await writer.finish(nil)
            })
        }
        router.get("slow") { _, _ in
            runs.increment()
            return Response(status: .ok, body: ResponseBody { writer in
                for _ in 0..<200 {
                    try await writer.write(ByteBuffer(repeating: 0x61, count: 64 * 1024))
                    try await pace(.milliseconds(20))
                }
                try await writer.finish(nil)
            })
        }
        router.get("refuse") { _, _ -> String in
            runs.increment()
            throw HTTPError(.badRequest, message: "no tea here")
        }
        router.get("boom") { _, _ -> String in
            runs.increment()
            throw ScenarioError()
        }
        router.get("whoami") { _, _ in
            runs.increment()
            return CaptureAgent.currentInboundFlowID?.description ?? "none"
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "scenario-service", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw CancellationError() }
        return HummingbirdScenarioService(port: port, stream: stream, runs: runs, task: task)
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// A request context that knows the client's address, as a service that
/// wants peers in its log declares (Examples/ServiceDemo, README).
struct PeerContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
#endif
