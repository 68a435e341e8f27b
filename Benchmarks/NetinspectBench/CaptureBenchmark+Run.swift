import CaptureAgent
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// Section 1's URLSession runs: what one run of one mode does, and the
/// readers and paths every run shares.
extension CaptureBenchmark {
    struct Environment {
        var server: BenchServer
        var inspector: BenchInspector
        /// The real netinspect in another process, `--dump`; nil when its binary is missing.
        var netinspect: NetinspectProcess?
        /// The same with `--json`, for uploads: its lines show request sizes.
        var uploadNetinspect: NetinspectProcess?
        /// The pinned rows' two, on a CPU of their own (``CPUPinning``);
        /// nil when those rows do not run.
        var pinnedNetinspect: NetinspectProcess?
        var pinnedUploadNetinspect: NetinspectProcess?
        var nobodyPath: String

        /// The netinspect that reads `workload`'s flows in a run of `mode`.
        func netinspect(for workload: Workload, mode: Mode) -> NetinspectProcess? {
            switch (workload.post, mode.isPinned) {
            case (false, false): netinspect
            case (true, false): uploadNetinspect
            case (false, true): pinnedNetinspect
            case (true, true): pinnedUploadNetinspect
            }
        }

        /// Where an agent of `mode` sends; `netinspect` is the one reading this run.
        func destination(of mode: Mode, netinspect: NetinspectProcess?) -> Endpoint {
            switch mode {
            case .agentWithInspector: inspector.endpoint
            case .agentWithNetinspect, .agentWithNetinspectPinned: netinspect?.endpoint ?? .unix(path: nobodyPath)
            case .none, .nonePinned, .naive, .agentWithoutInspector: .unix(path: nobodyPath)
            }
        }
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

    /// `NETINSPECT_BENCH_FOLD_WINDOW_MS`: how long the agent's writer waits
    /// for a flow's later events to fold into its start. Only
    /// Benchmarks/agent-instructions.sh sets it: under callgrind a request
    /// takes about fifty times as long, so with the agent's 5 ms no flow
    /// folds and the count is of three frames a flow, where a real run
    /// writes one.
    static let foldWindowOverride: UInt64? = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_FOLD_WINDOW_MS"]
        .flatMap(UInt64.init).map { $0 * 1_000_000 }

    static func startAgent(destination: Endpoint, connectionWait: TimeInterval, allowsControl: Bool = false) throws -> CaptureAgent {
        do {
            return try CaptureAgent.start(CaptureAgent.Configuration(destination: destination) {
                $0.appName = "netinspect-bench"
                $0.flushTimeout = 10
                $0.initialConnectionWait = connectionWait
                $0.allowsControl = allowsControl
                if let window = foldWindowOverride { $0.foldWindowNanoseconds = window }
            })
        } catch {
            throw BenchmarkError(description: "capture benchmark: CaptureAgent.start: \(error)")
        }
    }

    /// One run of `mode`, this process pinned for it when the mode is.
    static func runOnce(_ mode: Mode, workload: Workload, _ environment: Environment) throws -> RunResult {
        let netinspect = environment.netinspect(for: workload, mode: mode)
        let (run, check) = try CPUPinning.placed(pinned: mode.isPinned, netinspect: mode.readsWithNetinspect ? netinspect?.pid : nil) {
            try runPlaced(mode, workload: workload, netinspect: netinspect, environment)
        }
        var result = run
        result.placement = check
        return result
    }

    private static func runPlaced(_ mode: Mode, workload: Workload, netinspect: NetinspectProcess?, _ environment: Environment) throws -> RunResult {
        let count = mode == .naive ? workload.naiveCount : workload.count
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 60
        // Every chain gets its own connection, in every mode (the default is 6 per host).
        configuration.httpMaximumConnectionsPerHost = max(6, workload.concurrency)

        var agent: CaptureAgent?
        let flowsBefore = environment.inspector.flowsFinished
        let printedBefore = netinspect?.flowsPrinted ?? 0
        switch mode {
        case .none, .nonePinned:
            break
        case .naive:
            NaiveCaptureProtocol.install(in: configuration)
        case .agentWithInspector, .agentWithoutInspector, .agentWithNetinspect, .agentWithNetinspectPinned:
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
        case .none, .nonePinned:
            break
        case .naive:
            result.innerSessions = NaiveCaptureProtocol.sessionsCreated - naiveBefore
        case .agentWithInspector, .agentWithoutInspector, .agentWithNetinspect, .agentWithNetinspectPinned:
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
            if mode.readsWithNetinspect, let netinspect {
                result.flowsSeen = netinspect.waitForFlows(printedBefore + count, timeout: 30) - printedBefore
                result.flowsWithTrueSize = netinspect.flows(from: printedBefore, withFirstSize: postBodySize)
            }
        }
        session.finishTasksAndInvalidate()
        return result
    }
}

/// Section 1's printout: its table and a few lines under it.
struct CaptureReport {
    var table: Table
    var notes: [String]

    func render() -> String {
        table.render() + "\n" + notes.joined(separator: "\n") + "\n"
    }
}
