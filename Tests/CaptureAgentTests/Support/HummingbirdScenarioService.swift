// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import CaptureAgentHummingbird
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The scenario routes (``InboundFramework``) in a Hummingbird 2 service.
final class HummingbirdScenarioService: InboundService {
    let port: Int
    private let runs: RunCounter
    private let task: Task<Void, any Error>

    private init(port: Int, runs: RunCounter, task: Task<Void, any Error>) {
        self.port = port
        self.runs = runs
        self.task = task
    }

    var handlerRuns: Int { runs.value }

    static func start(captureInto agent: CaptureAgent?) async throws -> HummingbirdScenarioService {
        let runs = RunCounter()
        let router = Router(context: PeerContext.self)
        if let agent { router.add(middleware: InboundCaptureMiddleware(agent: agent)) }
        router.post("echo") { request, _ in
            runs.increment()
            let body = try await request.body.collect(upTo: 1 << 22)
            return Response(status: .ok, headers: [
                .contentType: "text/plain",
                HTTPField.Name("X-Method")!: request.method.rawValue,
                HTTPField.Name("X-Rule")!: request.headers[HTTPField.Name("X-Rule")!] ?? "none",
            ], body: .init(byteBuffer: body))
        }
        router.get("text") { _, _ in
            runs.increment()
            return Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "hello")))
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
        return HummingbirdScenarioService(port: port, runs: runs, task: task)
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
#endif
