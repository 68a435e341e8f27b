// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import CaptureAgentGRPC
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix

/// Section 9: unary gRPC calls at concurrency 16 over loopback HTTP/2
/// (grpc-swift 2, plaintext), client and server in this process; without
/// capture, and with both transports captured while the real netinspect
/// reads in another process. Interleaved rounds; the ratio is the median of
/// per-round wall-time ratios, and every flow (each call's client and
/// server side) must reach netinspect.
enum GRPCBenchmark {
    static let concurrency = 16
    static let target = 1.10
    static let rounds = BenchOptions.rounds(standard: 3)
    static let method = MethodDescriptor(fullyQualifiedService: "bench.Echo", method: "Get", type: .unary)

    static func run(tiny: Bool) throws -> Table {
        var table = Table(
            title: "9. gRPC: unary calls over loopback HTTP/2, client and server captured (c=\(concurrency))",
            columns: ["mode", "calls", "calls/s", "p50 ms", "p99 ms", "vs no capture", "flows shown", "notes"]
        )
        let count = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_GRPC_COUNT"].flatMap { Int($0) } ?? (tiny ? 200 : 20_000)
        guard let binary = NetinspectProcess.binary else {
            table.add(["-", "-", "-", "-", "-", "-", "-", "netinspect binary not found beside netinspect-bench: section skipped"])
            return table
        }
        let netinspect = try NetinspectProcess(binary: binary)
        defer { netinspect.shutdown() }
        _ = try runOnce(captured: false, count: 50, netinspect: netinspect)
        var plain: [ServiceRun] = [], captured: [ServiceRun] = []
        for round in 0 ..< rounds {
            for capturedFirst in [round % 2 == 1, round % 2 == 0] where BenchOptions.runsService(captured: capturedFirst) {
                let result = try runOnce(captured: capturedFirst, count: count, netinspect: netinspect)
                if capturedFirst { captured.append(result) } else { plain.append(result) }
            }
        }
        ServiceRun.addRows(to: &table, plain: plain, captured: captured, count: count, target: target, unit: "calls")
        return table
    }

    static func runOnce(captured: Bool, count: Int, netinspect: NetinspectProcess) throws -> ServiceRun {
        let agent = captured ? try CaptureBenchmark.startAgent(destination: netinspect.endpoint, connectionWait: 2) : nil
        let printedBefore = netinspect.flowsPrinted
        var run = try Blocking.run { try await measure(count: count, agent: agent) }.get()
        if let agent {
            run.flowsExpected = 2 * count
            run.flowsShown = netinspect.waitForFlows(printedBefore + 2 * count, timeout: 60) - printedBefore
            agent.stop()
            run.dropped = agent.statistics.droppedEvents
        }
        return run
    }

    private static func measure(count: Int, agent: CaptureAgent?) async throws -> ServiceRun {
        let serverTransport = HTTP2ServerTransport.Posix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext)
        let server = agent.map { GRPCServer(transport: $0.capture(serverTransport), services: [BenchService()]) }
        let plainServer = agent == nil ? GRPCServer(transport: serverTransport, services: [BenchService()]) : nil
        let serving = Task {
            if let server { try await server.serve() }
            if let plainServer { try await plainServer.serve() }
        }
        guard let port = try await serverTransport.listeningAddress.ipv4?.port else {
            throw BenchmarkError(description: "gRPC benchmark: the server has no IPv4 address")
        }
        let clientTransport = try HTTP2ClientTransport.Posix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        let result: ServiceRun
        if let agent {
            result = try await load(GRPCClient(transport: agent.capture(clientTransport)), count: count)
        } else {
            result = try await load(GRPCClient(transport: clientTransport), count: count)
        }
        server?.beginGracefulShutdown()
        plainServer?.beginGracefulShutdown()
        _ = await serving.result
        return result
    }

    private static func load<Transport: ClientTransport>(_ client: GRPCClient<Transport>, count: Int) async throws -> ServiceRun {
        let connections = Task { try await client.runConnections() }
        let request: [UInt8] = Array("order".utf8)
        let run = await ServiceRun.closedLoop(count: count, concurrency: concurrency) { _ in
            do {
                let answer = try await client.unary(request: ClientRequest(message: request), descriptor: method, serializer: BytesCoder(),
                                                    deserializer: BytesCoder(), options: .defaults) { try $0.message }
                return answer.count == BenchService.answerSize
            } catch {
                return false
            }
        }
        client.beginGracefulShutdown()
        _ = await connections.result
        return run
    }
}

/// Messages as their bytes, unchanged.
private struct BytesCoder: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    func deserialize<Bytes: GRPCContiguousBytes>(_ bytes: Bytes) throws -> [UInt8] { bytes.withUnsafeBytes { Array($0) } }
}

/// Answers every call with the same 256 bytes.
private struct BenchService: RegistrableRPCService {
    static let answerSize = 256
    private static let answer = [UInt8](repeating: 0x2a, count: answerSize)

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: GRPCBenchmark.method, deserializer: BytesCoder(), serializer: BytesCoder()) { request, _ in
            for try await _ in request.messages {}
            return StreamingServerResponse { writer in
                try await writer.write(Self.answer)
                return [:]
            }
        }
    }
}
#endif
