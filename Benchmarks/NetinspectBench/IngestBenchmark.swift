import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// Section 3: the inspector's ingest path without a terminal. Four agent
/// connections stream pre-encoded flows as fast as the socket takes them
/// into the real listener; one thread drains the inbox into the real store
/// (`Reducer.reduce(.inbox)`), as the UI thread does. A fifth connection
/// sends a probe flow every 5 ms; the latency is from just before its write
/// to the moment the drainer sees it in the store.
enum IngestBenchmark {
    static func run(tiny: Bool) throws -> Table {
        let connections = 4
        let flowsPerConnection = tiny ? 500 : 25_000
        let path = "/tmp/netinspect-bench-\(getpid()).sock"
        let inbox = Inbox()
        let listener = InspectorListener(configuration: ListenerConfiguration(endpoints: [.unix(path: path)]), inbox: inbox)
        _ = try listener.start()
        defer { listener.shutdown() }

        let encoder = FrameEncoder()
        let hello = try encoder.encode(.hello(Hello(agentName: "bench", agentVersion: "0", appName: "bench", processID: 1, hostName: "h")))
        let streams: [Data] = try (0..<connections).map { _ in
            var data = hello
            for (index, event) in UIBenchmark.events(flowsPerConnection).enumerated() {
                guard index > 0, case .message(_, let message) = event else { continue }
                data.append(try encoder.encode(message))
            }
            return data
        }
        let expectedFlows = connections * flowsPerConnection
        let expectedEvents = connections * (flowsPerConnection + flowsPerConnection * 9 / 10)

        let probes = ProbeClock()
        let drainer = Drainer(inbox: inbox, expectedFlows: expectedFlows, probes: probes)
        let drainThread = Thread { drainer.run() }
        drainThread.start()

        let start = ContinuousClock.now
        let senders = try streams.map { stream in
            let socket = try BenchSocket(path: path)
            let thread = Thread { socket.send(stream) }
            thread.start()
            return (socket, thread)
        }
        let prober = try BenchSocket(path: path)
        prober.send(hello)
        var probeNumber = 0
        while !drainer.isDone, ContinuousClock.now - start < .seconds(120) {
            let id = FlowID()
            let frame = try encoder.encode(.flowStarted(NetworkLog(
                request: Request(method: "GET", url: "http://probe/\(probeNumber)"), timing: Timing(startedAt: Date()))))
            probes.sent(id: "http://probe/\(probeNumber)")
            prober.send(frame)
            probeNumber += 1
            _ = id
            usleep(5_000)
        }
        let elapsed = drainer.finishedAt.map { ($0 - start).seconds } ?? .nan
        withExtendedLifetime(senders) {}
        guard drainer.isDone else { throw BenchmarkError(description: "ingest did not complete within 120 s") }

        var table = Table(title: "3. Inspector ingest (real listener and store, no terminal)",
                          columns: ["connections", "flows", "events", "seconds", "events/s", "probe latency p50", "p99", "target"])
        let latencies = probes.latencies.sorted()
        func percentile(_ p: Double) -> String {
            latencies.isEmpty ? "-" : format(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] * 1000, 2) + " ms"
        }
        table.add(["\(connections)", "\(expectedFlows)", "\(expectedEvents)", format(elapsed, 2),
                   formatCount(Double(expectedEvents) / elapsed), percentile(0.5), percentile(0.99), "≥ 50 k events/s"])
        return table
    }
}

/// Send times of probe flows, keyed by URL, and the latencies seen.
final class ProbeClock: @unchecked Sendable {
    private let lock = NSLock()
    private var sentAt: [String: ContinuousClock.Instant] = [:]
    private(set) var latencies: [Double] = []

    func sent(id: String) {
        lock.withLock { sentAt[id] = .now }
    }

    func seen(id: String) {
        let now = ContinuousClock.now
        lock.withLock {
            if let sent = sentAt.removeValue(forKey: id) { latencies.append((now - sent).seconds) }
        }
    }
}

/// The UI thread's part: drain the inbox into the state until every flow is in.
final class Drainer: @unchecked Sendable {
    private let inbox: Inbox
    private let expectedFlows: Int
    private let probes: ProbeClock
    private let lock = NSLock()
    private var done = false
    private(set) var finishedAt: ContinuousClock.Instant?

    init(inbox: Inbox, expectedFlows: Int, probes: ProbeClock) {
        self.inbox = inbox
        self.expectedFlows = expectedFlows
        self.probes = probes
    }

    var isDone: Bool { lock.withLock { done } }

    func run() {
        var state = AppState(limits: FlowStore.Limits(maximumFlows: expectedFlows * 2), size: UIBenchmark.size)
        var benchFlows = 0
        while benchFlows < expectedFlows {
            let events = inbox.wait(timeout: .milliseconds(100))
            _ = Reducer.reduce(&state, .inbox(events, at: Date()))
            // As the UI does: receipts go back to the agents.
            inbox.acknowledge(Inbox.takenEvents(in: events))
            for event in events {
                guard case .message(_, .flowStarted(let log)) = event else { continue }
                if log.request.url.hasPrefix("http://probe/") {
                    probes.seen(id: log.request.url)
                } else {
                    benchFlows += 1
                }
            }
        }
        lock.withLock {
            finishedAt = .now
            done = true
        }
    }
}

/// A blocking Unix socket client for the benchmark's agents.
final class BenchSocket: @unchecked Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw BenchmarkError(description: "connect \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    func send(_ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
