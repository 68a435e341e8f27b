// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import AsyncHTTPClient
import CaptureAgent
import CaptureAgentAsyncHTTPClient
import CaptureAgentHummingbird
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Section 8: a Hummingbird service under load, each inbound request making
/// one outbound AsyncHTTPClient call to ``BenchServer``; without capture, and
/// with `InboundCaptureMiddleware` plus a captured client while the real
/// netinspect reads in another process. Interleaved rounds; the ratio is the
/// median of per-round wall-time ratios, and every flow (inbound and
/// outbound) must reach netinspect.
enum InboundBenchmark {
    static let concurrency = 32
    static let target = 1.10
    static let rounds = BenchOptions.rounds(standard: 3)

    static func run(tiny: Bool) throws -> Table {
        var table = Table(
            title: "8. Inbound capture: a Hummingbird service, each request making one outbound call (c=\(concurrency))",
            columns: ["mode", "requests", "req/s", "p50 ms", "p99 ms", "vs no capture", "flows shown", "notes"]
        )
        let count = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_INBOUND_COUNT"].flatMap { Int($0) } ?? (tiny ? 200 : 20_000)
        let server = try BenchServer()
        defer { server.shutdown() }
        guard let binary = NetinspectProcess.binary else {
            table.add(["-", "-", "-", "-", "-", "-", "-", "netinspect binary not found beside netinspect-bench: section skipped"])
            return table
        }
        let netinspect = try NetinspectProcess(binary: binary)
        defer { netinspect.shutdown() }
        _ = try runOnce(captured: false, count: 50, server: server, netinspect: netinspect)
        var plain: [ServiceRun] = [], captured: [ServiceRun] = []
        for round in 0 ..< rounds {
            for capturedFirst in [round % 2 == 1, round % 2 == 0] where BenchOptions.runsService(captured: capturedFirst) {
                let result = try runOnce(captured: capturedFirst, count: count, server: server, netinspect: netinspect)
                if capturedFirst { captured.append(result) } else { plain.append(result) }
            }
        }
        ServiceRun.addRows(to: &table, plain: plain, captured: captured, count: count, target: target, unit: "requests")
        return table
    }

    static func runOnce(captured: Bool, count: Int, server: BenchServer, netinspect: NetinspectProcess) throws -> ServiceRun {
        var outbound = HTTPClient.Configuration()
        outbound.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        var agent: CaptureAgent?
        if captured {
            let started = try CaptureBenchmark.startAgent(destination: netinspect.endpoint, connectionWait: 2)
            started.capture(&outbound)
            agent = started
        }
        let printedBefore = netinspect.flowsPrinted
        let (capturing, configuration) = (agent, outbound)
        let result = Blocking.run {
            try await measure(count: count, agent: capturing, outbound: configuration, server: server)
        }
        var run = try result.get()
        if let agent {
            run.flowsExpected = 2 * count
            run.flowsShown = netinspect.waitForFlows(printedBefore + 2 * count, timeout: 60) - printedBefore
            agent.stop()
            run.dropped = agent.statistics.droppedEvents
        }
        return run
    }

    private static func measure(count: Int, agent: CaptureAgent?, outbound: HTTPClient.Configuration, server: BenchServer) async throws -> ServiceRun {
        let calls = HTTPClient(eventLoopGroupProvider: .singleton, configuration: outbound)
        let router = Router(context: BasicRequestContext.self)
        if let agent { router.add(middleware: InboundCaptureMiddleware(agent: agent)) }
        let item = "http://127.0.0.1:\(server.port)/item/"
        router.get("order/:n") { _, context -> String in
            let response = try await calls.execute(HTTPClientRequest(url: item + (context.parameters.get("n") ?? "0")), timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1 << 20)
            return "\(body.readableBytes)"
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) },
            logger: Logger(label: "bench-service", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let service = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        var load = HTTPClient.Configuration()
        load.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: load)
        let run = await ServiceRun.closedLoop(count: count, concurrency: concurrency) { index in
            do {
                let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/order/\(index)"), timeout: .seconds(60))
                let body = try await response.body.collect(upTo: 1 << 16)
                return response.status == .ok && String(buffer: body) == "\(BenchServer.getBodySize)"
            } catch {
                return false
            }
        }
        try await client.shutdown()
        service.cancel()
        _ = await service.result
        try await calls.shutdown()
        return run
    }
}
#endif
