import CaptureAgent
import Foundation

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
///   Both processes may run on every CPU, as they share a 2-core machine.
/// - the pinned pair, a developer's laptop: no capture, and agent+netinspect,
///   with this process (the app and its server) kept off one CPU and a
///   netinspect of its own alone on that one (``CPUPinning``); their ratio
///   is to the pinned no-capture run, so it is what reading costs an app
///   whose cores are its own.
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
/// no-capture run of the same round on the same CPUs; latency percentiles
/// pool all rounds.
enum CaptureBenchmark {
    enum Mode: Int, CaseIterable {
        case none, agentWithInspector, agentWithoutInspector, naive, agentWithNetinspect, nonePinned, agentWithNetinspectPinned

        var label: String {
            switch self {
            case .none: "no capture"
            case .agentWithInspector: "CaptureAgent, inspector reading"
            case .agentWithoutInspector: "CaptureAgent, no inspector"
            case .naive: "naive: 1 URLSession per request"
            case .agentWithNetinspect: "CaptureAgent, netinspect reading (another process)"
            case .nonePinned: "no capture, app pinned to its own core"
            case .agentWithNetinspectPinned: "CaptureAgent, netinspect reading on a core of its own"
            }
        }

        /// Its letter in `NETINSPECT_BENCH_MODES`: a for the first, and on.
        var letter: Character { Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8(rawValue))) }

        /// Whether this process runs pinned, netinspect on a CPU of its own.
        var isPinned: Bool { self == .nonePinned || self == .agentWithNetinspectPinned }

        /// The no-capture mode on the same CPUs, which its ratio is to.
        var baseline: Mode { isPinned ? .nonePinned : .none }

        /// Whether the real netinspect in another process reads its flows.
        var readsWithNetinspect: Bool { self == .agentWithNetinspect || self == .agentWithNetinspectPinned }
    }

    struct Workload {
        var name: String
        var count: Int
        /// Requests of the naive mode, when it runs fewer (ratio per request).
        var naiveCount: Int
        var concurrency: Int
        var post: Bool
    }

    /// Rounds per workload, 5 unless `--rounds` (or `NETINSPECT_BENCH_ROUNDS`)
    /// says (the callgrind recipe runs one).
    static let rounds = BenchOptions.rounds(standard: 5)
    static let postBodySize = 1 << 20

    /// `NETINSPECT_BENCH_COUNT=N` sets the requests of every URLSession run.
    static func workloads(tiny: Bool) -> [Workload] {
        let all = tiny
            ? [Workload(name: "GET 1 KiB, c=1", count: 100, naiveCount: 100, concurrency: 1, post: false),
               Workload(name: "GET 1 KiB, c=16", count: 100, naiveCount: 100, concurrency: 16, post: false),
               Workload(name: "POST 1 MiB, c=4", count: 10, naiveCount: 10, concurrency: 4, post: true)]
            : [Workload(name: "GET 1 KiB, c=1", count: 5_000, naiveCount: 5_000, concurrency: 1, post: false),
               Workload(name: "GET 1 KiB, c=16", count: 5_000, naiveCount: 5_000, concurrency: 16, post: false),
               Workload(name: "POST 1 MiB, c=4", count: 200, naiveCount: 200, concurrency: 4, post: true)]
        guard let count = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_COUNT"].flatMap({ Int($0) }) else { return all }
        return all.map { Workload(name: $0.name, count: count, naiveCount: count, concurrency: $0.concurrency, post: $0.post) }
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
        /// Where the run's threads were allowed to run, checked at its end.
        var placement = CPUPinning.Check()
    }

    /// "1.02 frames a flow": what the agent wrote for what netinspect printed.
    static func framesPerFlow(_ runs: [RunResult], flows: Int) -> String {
        "\(format(Double(runs.map(\.framesWritten).reduce(0, +)) / Double(max(flows, 1)), 2)) frames a flow"
    }

    /// For profiling (e.g. under callgrind): `NETINSPECT_BENCH_WORKLOADS=2`
    /// runs only the second workload.
    static func selection<T>(_ all: [T], variable: String, index: (String) -> Int?) -> [T] {
        guard let value = ProcessInfo.processInfo.environment[variable] else { return all }
        let picked = Set(value.split(separator: ",").compactMap { index(String($0)) })
        return all.indices.filter(picked.contains).map { all[$0] }
    }

    /// `NETINSPECT_BENCH_MODES=a,e,f,g` runs only the modes with those
    /// letters (a none, b agent with inspector, c agent without, d naive,
    /// e agent with netinspect in another process, f none pinned, g agent
    /// with netinspect on a core of its own). Without a mode's baseline
    /// there is no ratio.
    static func selectedModes<M>(_ all: [M], letters: (M) -> Set<Character>) -> [M] {
        guard let value = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_MODES"] else { return all }
        let picked = Set(value.split(separator: ",").compactMap { $0.count == 1 ? $0.first : nil })
        return all.filter { !letters($0).isDisjoint(with: picked) }
    }

    /// `NETINSPECT_BENCH_VERBOSE=1`: each run's wall time on stderr as it ends.
    static let verbose = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_VERBOSE"] == "1"

    static func run(tiny: Bool) throws -> CaptureReport {
        var modes = selectedModes(Mode.allCases) { [$0.letter] }
        let workloads = selection(workloads(tiny: tiny), variable: "NETINSPECT_BENCH_WORKLOADS") { Int($0).map { $0 - 1 } }
        let server = try BenchServer()
        defer { server.shutdown() }
        let inspector = try BenchInspector()
        defer { inspector.shutdown() }
        var missing: [String] = []
        let binary = NetinspectProcess.binary
        if binary == nil {
            modes.removeAll(where: \.readsWithNetinspect)
            missing.append("No netinspect binary beside netinspect-bench (or NETINSPECT_BENCH_NETINSPECT): its rows are left out.")
        }
        if CPUPinning.split == nil, modes.contains(where: \.isPinned) {
            modes.removeAll(where: \.isPinned)
            missing.append("Fewer than two CPUs allowed: the pinned rows are left out.")
        }
        let pinnedCPU = modes.contains(.agentWithNetinspectPinned) ? CPUPinning.split.map { [$0.netinspect] } : nil
        // Spawned before any run, while no thread of this process is pinned.
        func spawn(_ output: NetinspectProcess.Output, on cpus: [Int]?) throws -> NetinspectProcess? {
            try binary.map { try NetinspectProcess(binary: $0, output: output, cpus: cpus) }
        }
        let netinspect = try spawn(.dump, on: nil)
        defer { netinspect?.shutdown() }
        let uploadNetinspect = try spawn(.json, on: nil)
        defer { uploadNetinspect?.shutdown() }
        let pinnedNetinspect = try pinnedCPU.flatMap { try spawn(.dump, on: $0) }
        defer { pinnedNetinspect?.shutdown() }
        let pinnedUploadNetinspect = try pinnedCPU.flatMap { try spawn(.json, on: $0) }
        defer { pinnedUploadNetinspect?.shutdown() }
        let environment = Environment(
            server: server, inspector: inspector, netinspect: netinspect, uploadNetinspect: uploadNetinspect,
            pinnedNetinspect: pinnedNetinspect, pinnedUploadNetinspect: pinnedUploadNetinspect,
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
            for mode in modes { addRow(mode, workload: workload, results: results, to: &table, notes: &notes) }
        }
        #if AsyncHTTPClient
        if selection([1], variable: "NETINSPECT_BENCH_AHC", index: { $0 == "1" ? 0 : nil }).count == 1 {
            try AHCCaptureBenchmark.addRows(to: &table, notes: &notes, tiny: tiny, environment)
        }
        #endif
        return CaptureReport(table: table, notes: [
            "Targets at concurrency 16: CaptureAgent ≤ 1.10x no-capture wall time without an inspector and with netinspect reading in another process, ≤ 1.15x with one reading in this process",
        ] + missing + notes + [
            "URLSessions: the app's one session per run + the inner sessions that run created (agent: innerSessionCount; naive: its own count).",
            "path: how the agent captured the run's tasks (CaptureAgent.capturePaths): in place (corelibs' own protocol ran the app's task) or re-sent (an inner session).",
            "Agent runs start CaptureAgent before and stop it after each run; \"no inspector\" sends to a Unix path nobody listens on.",
        ] + (modes.contains(where: \.isPinned) ? [pinnedNote] : []))
    }

    /// Under the table when the pinned rows ran.
    static var pinnedNote: String {
        "Pinned rows: this process (app, its server, its readers) may run only on CPU "
            + (CPUPinning.split?.app.map(String.init).joined(separator: ",") ?? "?")
            + ", a netinspect of their own only on CPU \(CPUPinning.split.map { String($0.netinspect) } ?? "?")"
            + "; their wall / no capture is to the pinned no-capture run (whose own note gives it against the unpinned one). Other processes on the machine are not pinned."
    }

    /// The table row, and notes under the table, of one mode of one workload.
    private static func addRow(_ mode: Mode, workload: Workload, results: [Mode: [RunResult]], to table: inout Table, notes: inout [String]) {
        let runs = results[mode]!
        let requests = runs[0].requests
        let wall = median(runs.map(\.wall))
        let ratios = ratiosPerRequest(runs, to: results[mode.baseline] ?? [])
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
        case .agentWithNetinspect, .agentWithNetinspectPinned:
            let flows = runs.map(\.flowsSeen).reduce(0, +)
            let dropped = runs.map(\.droppedEvents).reduce(0, +)
            var note = "\(runs.count) runs: netinspect printed \(flows)/\(requests * runs.count) flows"
            if workload.post { note += ", \(runs.map(\.flowsWithTrueSize).reduce(0, +)) with the true request size" }
            cellNotes.append(note + ", \(dropped) events dropped, " + framesPerFlow(runs, flows: flows))
        case .nonePinned:
            let unpinned = ratiosPerRequest(runs, to: results[.none] ?? [])
            if !unpinned.isEmpty { cellNotes.append("\(format(median(unpinned), 2))x the unpinned no-capture wall time") }
        case .none, .naive:
            break
        }
        let placement = CPUPinning.note(runs.map(\.placement), pinned: mode.isPinned)
        if !placement.isEmpty { cellNotes.append(placement) }
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
           [.agentWithInspector, .agentWithoutInspector, .agentWithNetinspect, .agentWithNetinspectPinned].contains(mode) {
            let ratio = median(ratios)
            let target = mode == .agentWithInspector ? 1.15 : 1.10
            notes.append(String(format: "%@ at concurrency 16: %.2fx no-capture wall time (target %.2fx: %@)",
                                mode.label, ratio, target, ratio <= target ? "met" : "MISSED"))
        }
    }

    /// Per round, wall time per request over the baseline's of the same round.
    static func ratiosPerRequest(_ runs: [RunResult], to baseline: [RunResult]) -> [Double] {
        zip(runs, baseline).map { ($0.wall / Double($0.requests)) / ($1.wall / Double($1.requests)) }
    }
}
