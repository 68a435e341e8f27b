// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgent
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
import WireProtocol

/// Section 1's AsyncHTTPClient rows: GET 1 KiB at concurrency 16 through one
/// `HTTPClient`, without capture and with `agent.capture(&configuration)`
/// (inspector reading in this process, netinspect reading in another
/// process, and no inspector), against the same ``BenchServer``,
/// in interleaved rounds like the URLSession rows; and the pinned pair of
/// those rows (netinspect on a core of its own, ``CPUPinning``).
enum AHCCaptureBenchmark {
    enum Mode: CaseIterable {
        case none, agentWithInspector, agentWithoutInspector, agentWithNetinspect, nonePinned, agentWithNetinspectPinned
        /// An app that allows control: its connections go through the
        /// agent's control tunnel (ControlTunnel.swift), nothing in force.
        case controlWithNetinspect

        var label: String {
            switch self {
            case .none: "AsyncHTTPClient, no capture"
            case .agentWithInspector: "AsyncHTTPClient captured, inspector reading"
            case .agentWithoutInspector: "AsyncHTTPClient captured, no inspector"
            case .agentWithNetinspect: "AsyncHTTPClient captured, netinspect reading (another process)"
            case .nonePinned: "AsyncHTTPClient, no capture, app pinned to its own core"
            case .agentWithNetinspectPinned: "AsyncHTTPClient captured, netinspect reading on a core of its own"
            case .controlWithNetinspect: "AsyncHTTPClient captured, app allows control (control tunnel), netinspect reading"
            }
        }

        /// The URLSession rows' mode with the same destination.
        var captureMode: CaptureBenchmark.Mode {
            switch self {
            case .none: .none
            case .agentWithInspector: .agentWithInspector
            case .agentWithoutInspector: .agentWithoutInspector
            case .agentWithNetinspect: .agentWithNetinspect
            case .nonePinned: .nonePinned
            case .agentWithNetinspectPinned: .agentWithNetinspectPinned
            case .controlWithNetinspect: .agentWithNetinspect
            }
        }

        /// Its letters in `NETINSPECT_BENCH_MODES`: the URLSession mode's
        /// with the same destination, and d, its own letter before the
        /// URLSession letters were shared, for the netinspect row; h, past
        /// the URLSession letters, for the row of an app that allows control.
        var letters: Set<Character> {
            switch self {
            case .agentWithNetinspect: [captureMode.letter, "d"]
            case .controlWithNetinspect: ["h"]
            default: [captureMode.letter]
            }
        }
    }

    static let concurrency = 16
    /// Target: captured wall time per request at most this times the plain one.
    static let target = 1.05

    /// Runs the rounds and adds the rows and notes to section 1's report.
    ///
    /// For profiling (e.g. under callgrind), `NETINSPECT_BENCH_MODES` picks
    /// modes by the URLSession rows' letters (a no capture, b inspector
    /// reading, c no inspector, d or e netinspect in another process, f and g
    /// the pinned pair) and `NETINSPECT_BENCH_AHC_COUNT=N` sets the requests
    /// of each run. Without a mode's baseline there is no ratio.
    static func addRows(to table: inout Table, notes: inout [String], tiny: Bool, _ environment: CaptureBenchmark.Environment) throws {
        let count = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_AHC_COUNT"].flatMap { Int($0) } ?? (tiny ? 100 : 5_000)
        let modes = CaptureBenchmark.selectedModes(Mode.allCases, letters: \.letters)
            .filter { environment.netinspect != nil || !$0.captureMode.readsWithNetinspect }
            .filter { CPUPinning.split != nil || !$0.captureMode.isPinned }
            .filter { environment.pinnedNetinspect != nil || $0 != .agentWithNetinspectPinned }
        let workload = "AHC GET 1 KiB, c=16"
        for mode in modes { _ = try runOnce(mode, count: 20, environment) }
        var results: [Mode: [CaptureBenchmark.RunResult]] = [:]
        for round in 0 ..< CaptureBenchmark.rounds {
            for offset in modes.indices {
                let mode = modes[(round + offset) % modes.count]
                let result = try runOnce(mode, count: count, environment)
                results[mode, default: []].append(result)
                if CaptureBenchmark.verbose {
                    FileHandle.standardError.write(Data("section 1: \(workload), round \(round + 1), \(mode.label): \(format(result.wall, 3)) s\n".utf8))
                }
            }
        }
        for mode in modes {
            let runs = results[mode]!
            let wall = median(runs.map(\.wall))
            let ratios = CaptureBenchmark.ratiosPerRequest(runs, to: results[mode.captureMode.isPinned ? .nonePinned : .none] ?? [])
            let ratio = median(ratios)
            let latencies = runs.flatMap(\.latencies).sorted()
            var cellNotes: [String] = []
            switch mode {
            case .agentWithInspector:
                cellNotes.append("\(runs.count) runs: inspector got \(runs.map(\.flowsSeen).reduce(0, +))/\(count * runs.count) flows, "
                    + "\(runs.map(\.droppedEvents).reduce(0, +)) events dropped")
            case .agentWithoutInspector:
                cellNotes.append("\(runs.count) runs: \(runs.map(\.droppedEvents).reduce(0, +)) events dropped unencoded")
            case .agentWithNetinspect, .agentWithNetinspectPinned, .controlWithNetinspect:
                let flows = runs.map(\.flowsSeen).reduce(0, +)
                cellNotes.append("\(runs.count) runs: netinspect printed \(flows)/\(count * runs.count) flows, "
                    + "\(runs.map(\.droppedEvents).reduce(0, +)) events dropped, " + CaptureBenchmark.framesPerFlow(runs, flows: flows))
            case .nonePinned:
                let unpinned = CaptureBenchmark.ratiosPerRequest(runs, to: results[.none] ?? [])
                if !unpinned.isEmpty { cellNotes.append("\(format(median(unpinned), 2))x the unpinned no-capture wall time") }
            case .none:
                break
            }
            let placement = CPUPinning.note(runs.map(\.placement), pinned: mode.captureMode.isPinned)
            if !placement.isEmpty { cellNotes.append(placement) }
            let failures = runs.map(\.failures).reduce(0, +)
            if failures > 0 {
                cellNotes.append("\(failures) FAILED")
                notes.append("\(workload), \(mode.label): \(failures) requests failed, first: \(runs.compactMap(\.firstFailure).first ?? "?")")
            }
            table.add([
                workload, mode.label, "\(count)", formatCount(Double(count) / wall),
                format(percentile(latencies, 0.5) * 1000, 2), format(percentile(latencies, 0.99) * 1000, 2),
                ratios.isEmpty ? "-" : format(ratio, 2) + "x", "-", "-", cellNotes.joined(separator: "; "),
            ])
            if mode != .none, mode != .nonePinned, mode != .controlWithNetinspect, !ratios.isEmpty {
                notes.append(String(format: "%@ at concurrency 16: %.2fx no-capture wall time (%@, target ≤ %.2fx); per round min %.2fx, max %.2fx",
                                    mode.label, ratio, ratio <= target ? "target met" : "target MISSED", target,
                                    ratios.min()!, ratios.max()!))
            }
        }
    }

    /// One run of `mode`, this process pinned for it when the mode is.
    static func runOnce(_ mode: Mode, count: Int, _ environment: CaptureBenchmark.Environment) throws -> CaptureBenchmark.RunResult {
        let pinned = mode.captureMode.isPinned
        let netinspect = pinned ? environment.pinnedNetinspect : environment.netinspect
        let (run, check) = try CPUPinning.placed(pinned: pinned, netinspect: mode.captureMode.readsWithNetinspect ? netinspect?.pid : nil) {
            try runPlaced(mode, count: count, netinspect: netinspect, environment)
        }
        var result = run
        result.placement = check
        return result
    }

    private static func runPlaced(_ mode: Mode, count: Int, netinspect: NetinspectProcess?,
                                  _ environment: CaptureBenchmark.Environment) throws -> CaptureBenchmark.RunResult {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        var agent: CaptureAgent?
        let flowsBefore = environment.inspector.flowsFinished
        let printedBefore = netinspect?.flowsPrinted ?? 0
        if mode != .none, mode != .nonePinned {
            let started = try CaptureBenchmark.startAgent(destination: environment.destination(of: mode.captureMode, netinspect: netinspect), connectionWait: 2,
                                                          allowsControl: mode == .controlWithNetinspect)
            agent = started
            started.capture(&configuration)
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = "http://127.0.0.1:\(environment.server.port)/item/"
        let outcome = Box<(wall: Double, latencies: [Double], failures: Int, first: String?)>()
        let done = DispatchSemaphore(value: 0)
        Task {
            let started = DispatchTime.now().uptimeNanoseconds
            let perTask = (0 ..< concurrency).map { chain in stride(from: chain, to: count, by: concurrency).map { $0 } }
            let results = await withTaskGroup(of: ([Double], Int, String?).self) { group in
                for indices in perTask {
                    group.addTask {
                        var latencies: [Double] = []
                        var failures = 0
                        var first: String?
                        for index in indices {
                            let begin = DispatchTime.now().uptimeNanoseconds
                            do {
                                let response = try await client.execute(HTTPClientRequest(url: url + String(index)), timeout: .seconds(60))
                                let body = try await response.body.collect(upTo: 1 << 20)
                                if response.status != .ok || body.readableBytes != BenchServer.getBodySize {
                                    failures += 1
                                    first = first ?? "status \(response.status.code), \(body.readableBytes) bytes"
                                }
                            } catch {
                                failures += 1
                                first = first ?? "\(error)"
                            }
                            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
                        }
                        return (latencies, failures, first)
                    }
                }
                var all: [([Double], Int, String?)] = []
                for await result in group { all.append(result) }
                return all
            }
            let wall = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            outcome.value = (wall, results.flatMap(\.0), results.map(\.1).reduce(0, +), results.compactMap(\.2).first)
            try? await client.shutdown()
            done.signal()
        }
        done.wait()
        let measured = outcome.value!
        var result = CaptureBenchmark.RunResult(requests: count, wall: measured.wall, latencies: measured.latencies, innerSessions: 0,
                                                failures: measured.failures, firstFailure: measured.first)
        if let agent {
            agent.stop()
            result.droppedEvents = agent.statistics.droppedEvents
            result.framesWritten = agent.statistics.framesWritten
            if mode == .agentWithInspector {
                result.flowsSeen = environment.inspector.waitForFlows(flowsBefore + count, timeout: 10) - flowsBefore
            }
            if mode.captureMode.readsWithNetinspect, let netinspect {
                result.flowsSeen = netinspect.waitForFlows(printedBefore + count, timeout: 30) - printedBefore
            }
        }
        return result
    }
}

/// A value handed from a task to the waiting thread (the semaphore orders the two).
private final class Box<Value>: @unchecked Sendable {
    var value: Value?
}
#endif
