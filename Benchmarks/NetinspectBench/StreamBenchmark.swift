// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgent
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Section 10: streamed responses. AsyncHTTPClient reads server-sent events
/// from ``StreamServer`` (one stream at 1,000 events a second; 100 slow
/// streams at once), without capture and captured while the real netinspect
/// reads in another process. The stream's pace fixes the wall time, so the
/// app's cost is the CPU time this process spent (server, client and agent
/// together; only the agent differs between the rows), and "never buffers"
/// is each event's delivery time: from the server writing it to the app
/// reading it, both in this process. Every flow must reach netinspect with
/// its whole body.
enum StreamBenchmark {
    struct Workload {
        var name: String
        var streams: Int
        var rate: Double
        var seconds: Double
        var events: Int { streams * Int(rate * seconds) }
    }

    struct Run {
        var cpu: Double
        var received = 0
        var delivery: [Double] = []
        var failures = 0
        var flowsWhole = 0
        var framesWritten = 0
    }

    static let rounds = BenchOptions.rounds(standard: 2)

    static func run(tiny: Bool) throws -> Table {
        var table = Table(
            title: "10. Streamed responses: server-sent events read by AsyncHTTPClient (app's CPU; delivery = server write to app read)",
            columns: ["workload", "mode", "events", "app CPU ms", "vs no capture", "delivery p50 ms", "delivery p99 ms", "flows whole in netinspect", "notes"]
        )
        let workloads = [
            Workload(name: tiny ? "1 stream, 100 events/s, 1 s" : "1 stream, 1,000 events/s, 10 s", streams: 1, rate: tiny ? 100 : 1000, seconds: tiny ? 1 : 10),
            Workload(name: tiny ? "10 streams, 10 events/s, 1 s" : "100 streams, 10 events/s, 10 s", streams: tiny ? 10 : 100, rate: 10, seconds: tiny ? 1 : 10),
        ]
        guard let binary = NetinspectProcess.binary else {
            table.add(["-", "-", "-", "-", "-", "-", "-", "-", "netinspect binary not found beside netinspect-bench: section skipped"])
            return table
        }
        let server = try StreamServer.start()
        defer { server.shutdown() }
        let netinspect = try NetinspectProcess(binary: binary, output: .json)
        defer { netinspect.shutdown() }
        for workload in workloads {
            var plain: [Run] = [], captured: [Run] = []
            for round in 0 ..< rounds {
                for capturing in [round % 2 == 1, round % 2 == 0] {
                    let result = try runOnce(workload, captured: capturing, server: server, netinspect: netinspect)
                    if capturing { captured.append(result) } else { plain.append(result) }
                }
            }
            let baseline = median(plain.map(\.cpu))
            for (label, runs, isCaptured) in [("no capture", plain, false), ("captured, netinspect reading (another process)", captured, true)] {
                let delivery = runs.flatMap(\.delivery).sorted()
                let cpu = median(runs.map(\.cpu))
                var notes = ["\(runs.count) runs: \(runs.map(\.received).reduce(0, +))/\(workload.events * runs.count) events read"]
                if isCaptured { notes.append("\(runs.map(\.framesWritten).reduce(0, +) / max(1, runs.count)) frames written a run") }
                let failures = runs.map(\.failures).reduce(0, +)
                if failures > 0 { notes.append("\(failures) streams FAILED") }
                table.add([
                    workload.name, label, "\(workload.events)", format(cpu * 1000, 0),
                    isCaptured ? format(cpu / baseline, 2) + "x" : "-",
                    format(percentile(delivery, 0.5) * 1000, 2), format(percentile(delivery, 0.99) * 1000, 2),
                    isCaptured ? "\(runs.map(\.flowsWhole).reduce(0, +))/\(workload.streams * runs.count)" : "-",
                    notes.joined(separator: "; "),
                ])
            }
        }
        return table
    }

    private static func runOnce(_ workload: Workload, captured: Bool, server: BenchServer, netinspect: NetinspectProcess) throws -> Run {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = workload.streams
        var agent: CaptureAgent?
        if captured {
            let started = try CaptureBenchmark.startAgent(destination: netinspect.endpoint, connectionWait: 2)
            started.capture(&configuration)
            agent = started
        }
        let printedBefore = netinspect.flowsPrinted
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = "http://127.0.0.1:\(server.port)/stream?rate=\(workload.rate)&seconds=\(workload.seconds)"
        let cpuBefore = cpuSeconds()
        let outcome = Blocking.run { () async -> [(Int, [Double], Bool)] in
            await withTaskGroup(of: (Int, [Double], Bool).self) { group in
                for _ in 0 ..< workload.streams {
                    group.addTask { await read(url, client: client) }
                }
                var all: [(Int, [Double], Bool)] = []
                for await result in group { all.append(result) }
                return all
            }
        }
        var run = Run(cpu: cpuSeconds() - cpuBefore)
        let streams = (try? outcome.get()) ?? []
        run.received = streams.map(\.0).reduce(0, +)
        run.delivery = streams.flatMap(\.1)
        run.failures = streams.filter { !$0.2 }.count + (workload.streams - streams.count)
        _ = Blocking.run { try await client.shutdown() }
        if let agent {
            agent.stop()
            run.framesWritten = agent.statistics.framesWritten
            _ = netinspect.waitForFlows(printedBefore + workload.streams, timeout: 30)
            run.flowsWhole = netinspect.flows(from: printedBefore, withFirstSize: Int(workload.rate * workload.seconds) * StreamServer.eventSize)
        }
        return run
    }

    /// Reads one stream to its end: events read, each one's delivery time, and whether it ended well.
    private static func read(_ url: String, client: HTTPClient) async -> (Int, [Double], Bool) {
        var delivery: [Double] = []
        var pending: [UInt8] = []
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
            for try await chunk in response.body {
                let now = DispatchTime.now().uptimeNanoseconds
                pending += chunk.readableBytesView
                while pending.count >= StreamServer.eventSize {
                    if let sent = StreamServer.sentAt(pending[0 ..< StreamServer.eventSize]) {
                        delivery.append(Double(now &- sent) / 1e9)
                    }
                    pending.removeFirst(StreamServer.eventSize)
                }
            }
            return (delivery.count, delivery, response.status == .ok && pending.isEmpty)
        } catch {
            return (delivery.count, delivery, false)
        }
    }

    /// User and system CPU time of this process so far.
    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
#endif
