import CaptureAgent
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InspectorCore
import Synchronization
import WireProtocol

/// Section 1: what capture costs the app, against one loopback HTTP server
/// (``BenchServer``), the same requests in every mode.
///
/// Modes:
/// - none: a plain session.
/// - agent+inspector: CaptureAgent streaming to a real ``InspectorListener``
///   in this process, whose ``Inbox`` a thread drains (decoded messages, no
///   store, no terminal).
/// - agent, no inspector: CaptureAgent whose destination is a Unix path
///   nobody listens on.
/// - naive: ``NaiveCaptureProtocol``, one inner URLSession per request.
/// - agent+netinspect: CaptureAgent streaming to the real `netinspect` in
///   another process (``NetinspectProcess``), as a person runs it: `--dump`
///   for GETs, `--json` for uploads, whose lines show each request's size.
///
/// One agent per process: each agent run starts an agent with its mode's
/// destination and stops it afterwards (`stop()` then `start()` is
/// supported), so every agent run also begins with a fresh set of inner
/// sessions, which makes `innerSessionCount` the number that run created.
///
/// Each workload runs its modes in rotation for five rounds (the first mode
/// of each round moves on by one), after a short warm-up of every mode, so
/// that a noisy machine slows all modes alike. Figures: median wall time
/// over the rounds; the ratio is the median of the per-round ratios to the
/// no-capture run of the same round; latency percentiles pool all rounds.
enum CaptureBenchmark {
    enum Mode: Int, CaseIterable {
        case none, agentWithInspector, agentWithoutInspector, naive, agentWithNetinspect

        var label: String {
            switch self {
            case .none: "no capture"
            case .agentWithInspector: "CaptureAgent, inspector reading"
            case .agentWithoutInspector: "CaptureAgent, no inspector"
            case .naive: "naive: 1 URLSession per request"
            case .agentWithNetinspect: "CaptureAgent, netinspect reading (another process)"
            }
        }
    }

    struct Workload {
        var name: String
        var count: Int
        /// Requests of the naive mode, when it runs fewer (ratio per request).
        var naiveCount: Int
        var concurrency: Int
        var post: Bool
    }

    static let rounds = 5
    static let postBodySize = 1 << 20

    static func workloads(tiny: Bool) -> [Workload] {
        tiny
            ? [Workload(name: "GET 1 KiB, c=1", count: 100, naiveCount: 100, concurrency: 1, post: false),
               Workload(name: "GET 1 KiB, c=16", count: 100, naiveCount: 100, concurrency: 16, post: false),
               Workload(name: "POST 1 MiB, c=4", count: 10, naiveCount: 10, concurrency: 4, post: true)]
            : [Workload(name: "GET 1 KiB, c=1", count: 5_000, naiveCount: 5_000, concurrency: 1, post: false),
               Workload(name: "GET 1 KiB, c=16", count: 5_000, naiveCount: 5_000, concurrency: 16, post: false),
               Workload(name: "POST 1 MiB, c=4", count: 200, naiveCount: 200, concurrency: 4, post: true)]
    }

    /// One run of one mode.
    struct RunResult {
        var requests: Int
        var wall: Double
        var latencies: [Double]
        /// URLSessions created besides the app's own one.
        var innerSessions: Int
        var failures: Int
        var firstFailure: String?
        /// Agent modes: flows the inspector received, events the agent dropped.
        var flowsSeen = 0
        /// netinspect mode: flows printed with the app's true request body size.
        var flowsWithTrueSize = 0
        var droppedEvents = 0
        /// Agent modes: frames the agent wrote (hello and status included);
        /// fewer than its flow events when later events folded into starts.
        var framesWritten = 0
        /// Agent modes: tasks captured in place and tasks re-sent.
        var paths = CaptureAgent.PathCounts()
    }

    /// "1.02 frames a flow": what the agent wrote for what netinspect printed.
    static func framesPerFlow(_ runs: [RunResult], flows: Int) -> String {
        "\(format(Double(runs.map(\.framesWritten).reduce(0, +)) / Double(max(flows, 1)), 2)) frames a flow"
    }

    /// For profiling one mode at a time (e.g. under callgrind):
    /// `NETINSPECT_BENCH_MODES=a,c` runs only those modes (a none, b agent
    /// with inspector, c agent without, d naive, e agent with netinspect in
    /// another process), `NETINSPECT_BENCH_WORKLOADS=2`
    /// only the second workload. Without the no-capture mode there is no ratio.
    static func selection<T>(_ all: [T], variable: String, index: (String) -> Int?) -> [T] {
        guard let value = ProcessInfo.processInfo.environment[variable] else { return all }
        let picked = Set(value.split(separator: ",").compactMap { index(String($0)) })
        return all.indices.filter(picked.contains).map { all[$0] }
    }

    /// `NETINSPECT_BENCH_VERBOSE=1`: each run's wall time on stderr as it ends.
    static let verbose = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_VERBOSE"] == "1"

    static func run(tiny: Bool) throws -> CaptureReport {
        var modes = selection(Mode.allCases, variable: "NETINSPECT_BENCH_MODES") {
            $0.count == 1 ? Int($0.unicodeScalars.first!.value) - Int(("a" as Unicode.Scalar).value) : nil
        }
        let workloads = selection(workloads(tiny: tiny), variable: "NETINSPECT_BENCH_WORKLOADS") { Int($0).map { $0 - 1 } }
        let server = try BenchServer()
        defer { server.shutdown() }
        let inspector = try BenchInspector()
        defer { inspector.shutdown() }
        var missing: [String] = []
        let netinspect = try NetinspectProcess.binary.map { try NetinspectProcess(binary: $0) }
        defer { netinspect?.shutdown() }
        let uploadNetinspect = try NetinspectProcess.binary.map { try NetinspectProcess(binary: $0, output: .json) }
        defer { uploadNetinspect?.shutdown() }
        if netinspect == nil {
            modes.removeAll { $0 == .agentWithNetinspect }
            missing.append("No netinspect binary beside netinspect-bench (or NETINSPECT_BENCH_NETINSPECT): its rows are left out.")
        }
        let environment = Environment(
            server: server, inspector: inspector, netinspect: netinspect, uploadNetinspect: uploadNetinspect,
            nobodyPath: FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-\(getpid())-nobody.sock").path)

        // Start (and stop) one agent before this process creates any URLSession,
        // as an app would: later starts then find URLSession.shared captured
        // and do not print the agent's "started too late" warning.
        _ = try startAgent(destination: .unix(path: environment.nobodyPath), connectionWait: 0).stop()

        var table = Table(
            title: "1. Capture overhead (loopback HTTP; median of \(rounds) interleaved rounds)",
            columns: ["workload", "mode", "requests", "req/s", "p50 ms", "p99 ms", "wall / no capture", "URLSessions", "path", "notes"])
        var notes: [String] = []
        for workload in workloads {
            // Warm-up: first-use costs (libcurl, lazy statics, the first connect) hit no mode's figures.
            for mode in modes {
                _ = try runOnce(mode, workload: Workload(name: "warm-up", count: 20, naiveCount: 20,
                                                         concurrency: workload.concurrency, post: workload.post),
                                environment)
            }
            var results: [Mode: [RunResult]] = [:]
            for round in 0 ..< rounds {
                for offset in modes.indices {
                    let mode = modes[(round + offset) % modes.count]
                    let result = try runOnce(mode, workload: workload, environment)
                    results[mode, default: []].append(result)
                    if verbose {
                        FileHandle.standardError.write(Data("section 1: \(workload.name), round \(round + 1), \(mode.label): \(format(result.wall, 2)) s\n".utf8))
                    }
                }
            }
            let baseline = results[.none] ?? []
            for mode in modes {
                let runs = results[mode]!
                let requests = runs[0].requests
                let wall = median(runs.map(\.wall))
                let ratios = zip(runs, baseline).map { ($0.wall / Double($0.requests)) / ($1.wall / Double($1.requests)) }
                let latencies = runs.flatMap(\.latencies).sorted()
                let sessions = runs.map(\.innerSessions).max() ?? 0
                var cellNotes: [String] = []
                if requests != workload.count { cellNotes.append("\(requests) requests; ratio per request") }
                switch mode {
                case .agentWithInspector:
                    let flows = runs.map(\.flowsSeen).reduce(0, +)
                    let dropped = runs.map(\.droppedEvents).reduce(0, +)
                    cellNotes.append("\(runs.count) runs: inspector got \(flows)/\(requests * runs.count) flows, \(dropped) events dropped")
                case .agentWithoutInspector:
                    cellNotes.append("\(runs.count) runs: \(runs.map(\.droppedEvents).reduce(0, +)) events dropped unencoded")
                case .agentWithNetinspect:
                    let flows = runs.map(\.flowsSeen).reduce(0, +)
                    let dropped = runs.map(\.droppedEvents).reduce(0, +)
                    var note = "\(runs.count) runs: netinspect printed \(flows)/\(requests * runs.count) flows"
                    if workload.post { note += ", \(runs.map(\.flowsWithTrueSize).reduce(0, +)) with the true request size" }
                    cellNotes.append(note + ", \(dropped) events dropped, " + framesPerFlow(runs, flows: flows))
                case .none, .naive:
                    break
                }
                let inPlace = runs.map(\.paths.inPlace).reduce(0, +)
                let resent = runs.map(\.paths.resent).reduce(0, +)
                let path = switch (inPlace, resent) {
                case (0, 0): mode == .naive ? "re-sent" : "-"
                case (_, 0): "in place"
                case (0, _): "re-sent"
                default: "\(inPlace) in place, \(resent) re-sent"
                }
                let failures = runs.map(\.failures).reduce(0, +)
                if failures > 0 {
                    cellNotes.append("\(failures) FAILED")
                    notes.append("\(workload.name), \(mode.label): \(failures) requests failed, first: \(runs.compactMap(\.firstFailure).first ?? "?")")
                }
                table.add([
                    workload.name, mode.label, "\(requests)", formatCount(Double(requests) / wall),
                    format(percentile(latencies, 0.5) * 1000, 2), format(percentile(latencies, 0.99) * 1000, 2),
                    ratios.isEmpty ? "-" : format(median(ratios), 2) + "x",
                    sessions == 0 ? "1" : "1 + \(sessions)",
                    path,
                    cellNotes.joined(separator: "; "),
                ])
                if workload.concurrency == 16, !workload.post, !ratios.isEmpty,
                   mode == .agentWithInspector || mode == .agentWithoutInspector || mode == .agentWithNetinspect {
                    let ratio = median(ratios)
                    let target = mode == .agentWithInspector ? 1.15 : 1.10
                    notes.append(String(format: "%@ at concurrency 16: %.2fx no-capture wall time (target %.2fx: %@)",
                                        mode.label, ratio, target, ratio <= target ? "met" : "MISSED"))
                }
            }
        }
        if selection([1], variable: "NETINSPECT_BENCH_AHC", index: { $0 == "1" ? 0 : nil }).count == 1 {
            try AHCCaptureBenchmark.addRows(to: &table, notes: &notes, tiny: tiny, environment)
        }
        return CaptureReport(table: table, notes: [
            "Targets at concurrency 16: CaptureAgent ≤ 1.10x no-capture wall time without an inspector and with netinspect reading in another process, ≤ 1.15x with one reading in this process",
        ] + missing + notes + [
            "URLSessions: the app's one session per run + the inner sessions that run created (agent: innerSessionCount; naive: its own count).",
            "path: how the agent captured the run's tasks (CaptureAgent.capturePaths): in place (corelibs' own protocol ran the app's task) or re-sent (an inner session).",
            "Agent runs start CaptureAgent before and stop it after each run; \"no inspector\" sends to a Unix path nobody listens on.",
        ])
    }

    struct Environment {
        var server: BenchServer
        var inspector: BenchInspector
        /// The real netinspect in another process, `--dump`; nil when its binary is missing.
        var netinspect: NetinspectProcess?
        /// The same with `--json`, for uploads: its lines show request sizes.
        var uploadNetinspect: NetinspectProcess?
        var nobodyPath: String
    }

    private static let postBody = Data(repeating: UInt8(ascii: "p"), count: postBodySize)

    static func requests(for workload: Workload, count: Int, port: Int) -> [URLRequest] {
        (0 ..< count).map { index in
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/\(workload.post ? "upload" : "item")/\(index)")!)
            if workload.post {
                request.httpMethod = "POST"
                request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
                request.httpBody = postBody
            }
            return request
        }
    }

    static func startAgent(destination: Endpoint, connectionWait: TimeInterval) throws -> CaptureAgent {
        do {
            return try CaptureAgent.start(CaptureAgent.Configuration(destination: destination) {
                $0.appName = "netinspect-bench"
                $0.flushTimeout = 10
                $0.initialConnectionWait = connectionWait
            })
        } catch {
            throw BenchmarkError(description: "capture benchmark: CaptureAgent.start: \(error)")
        }
    }

    static func runOnce(_ mode: Mode, workload: Workload, _ environment: Environment) throws -> RunResult {
        let count = mode == .naive ? workload.naiveCount : workload.count
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 60
        // Every chain gets its own connection, in every mode (the default is 6 per host).
        configuration.httpMaximumConnectionsPerHost = max(6, workload.concurrency)

        var agent: CaptureAgent?
        let flowsBefore = environment.inspector.flowsFinished
        let netinspect = environment.netinspect(for: workload)
        let printedBefore = netinspect?.flowsPrinted ?? 0
        switch mode {
        case .none:
            break
        case .naive:
            NaiveCaptureProtocol.install(in: configuration)
        case .agentWithInspector, .agentWithoutInspector, .agentWithNetinspect:
            let destination = environment.destination(of: mode, netinspect: netinspect)
            let started = try startAgent(destination: destination, connectionWait: 2)
            agent = started
            guard started.isConnected == (mode != .agentWithoutInspector) else {
                started.stop()
                throw BenchmarkError(description: "capture benchmark: \(mode.label): agent connected = \(started.isConnected)")
            }
            started.capture(configuration)
        }

        let session = URLSession(configuration: configuration)
        let naiveBefore = NaiveCaptureProtocol.sessionsCreated
        let post = workload.post
        let load = LoadRun(session: session, requests: requests(for: workload, count: count, port: environment.server.port)) {
            data, response, error in
            if let error { return "\(error)" }
            guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else { return "status \(String(describing: response))" }
            let size = data?.count ?? 0
            if post {
                let text = String(decoding: data ?? Data(), as: UTF8.self)
                return text == String(postBodySize) ? nil : "server received \(text) bytes"
            }
            return size == BenchServer.getBodySize ? nil : "\(size) bytes"
        }
        let outcome = try load.run(concurrency: workload.concurrency, timeout: 600)

        var result = RunResult(requests: count, wall: outcome.wall, latencies: outcome.latencies, innerSessions: 0,
                               failures: outcome.failures, firstFailure: outcome.firstFailure)
        switch mode {
        case .none:
            break
        case .naive:
            result.innerSessions = NaiveCaptureProtocol.sessionsCreated - naiveBefore
        case .agentWithInspector, .agentWithoutInspector, .agentWithNetinspect:
            if let agent {
                result.innerSessions = agent.innerSessionCount
                result.paths = agent.capturePaths
                agent.stop()
                result.droppedEvents = agent.statistics.droppedEvents
                result.framesWritten = agent.statistics.framesWritten
            }
            if mode == .agentWithInspector {
                result.flowsSeen = environment.inspector.waitForFlows(flowsBefore + count, timeout: 10) - flowsBefore
            }
            if mode == .agentWithNetinspect, let netinspect {
                result.flowsSeen = netinspect.waitForFlows(printedBefore + count, timeout: 30) - printedBefore
                result.flowsWithTrueSize = netinspect.flows(from: printedBefore, withFirstSize: postBodySize)
            }
        }
        session.finishTasksAndInvalidate()
        return result
    }
}

/// Section 1's printout: its table and a few lines under it.
extension CaptureBenchmark.Environment {
    /// The netinspect that reads `workload`'s flows.
    func netinspect(for workload: CaptureBenchmark.Workload) -> NetinspectProcess? {
        workload.post ? uploadNetinspect : netinspect
    }

    /// Where an agent of `mode` sends; `netinspect` is the one reading this run.
    func destination(of mode: CaptureBenchmark.Mode, netinspect: NetinspectProcess?) -> Endpoint {
        switch mode {
        case .agentWithInspector: inspector.endpoint
        case .agentWithNetinspect: netinspect?.endpoint ?? .unix(path: nobodyPath)
        case .none, .naive, .agentWithoutInspector: .unix(path: nobodyPath)
        }
    }
}

struct CaptureReport {
    var table: Table
    var notes: [String]

    func render() -> String {
        table.render() + "\n" + notes.joined(separator: "\n") + "\n"
    }
}

/// A real ``InspectorListener`` on a Unix socket of its own, with a thread
/// draining its ``Inbox`` and counting finished flows, as the inspector's UI
/// thread would (minus the store and the terminal).
final class BenchInspector: Sendable {
    let endpoint: Endpoint
    private let listener: InspectorListener
    private let inbox = Inbox()
    private let finished = Mutex(0)
    private let stopping = Mutex(false)
    private let drained = DispatchSemaphore(value: 0)

    init() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-\(getpid()).sock").path
        endpoint = .unix(path: path)
        listener = InspectorListener(configuration: ListenerConfiguration(endpoints: [endpoint]), inbox: inbox)
        do {
            _ = try listener.start()
        } catch {
            throw BenchmarkError(description: "capture benchmark: inspector listener: \(error)")
        }
        let thread = Thread { [self] in drain() }
        thread.name = "netinspect-bench.inspector"
        thread.start()
    }

    private func drain() {
        while !stopping.withLock({ $0 }) {
            var flows = 0
            for event in inbox.wait(timeout: .milliseconds(100)) {
                switch event {
                case .message(_, .flowFinished): flows += 1
                // A flow that ended before its start was written comes finished in one message.
                case .message(_, .flowStarted(let log)) where log.state.isFinal: flows += 1
                default: break
                }
            }
            if flows > 0 { finished.withLock { $0 += flows } }
        }
        drained.signal()
    }

    /// Finished flows received so far.
    var flowsFinished: Int { finished.withLock { $0 } }

    /// Waits until `target` flows have finished or `timeout` passes; returns the count.
    func waitForFlows(_ target: Int, timeout: Double) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while flowsFinished < target, Date() < deadline { usleep(5_000) }
        return flowsFinished
    }

    func shutdown() {
        listener.shutdown()
        stopping.withLock { $0 = true }
        drained.wait()
    }
}
