import Foundation

/// Runs async work from the benchmark's synchronous code and waits for it.
enum Blocking {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return box.result!
    }

    private final class ResultBox<T>: @unchecked Sendable {
        var result: Result<T, any Error>?
    }
}

/// One timed run of a service under closed-loop load (sections 8 and 9):
/// without capture, or captured with netinspect reading in another process.
struct ServiceRun {
    var wall: Double
    var latencies: [Double]
    var failures: Int
    var flowsShown = 0
    var flowsExpected = 0
    var dropped = 0

    /// `count` calls of `call` (given each call's index; true when the
    /// answer was right) in `concurrency` chains, each starting its next
    /// call when the previous one ends.
    static func closedLoop(count: Int, concurrency: Int, _ call: @escaping @Sendable (Int) async -> Bool) async -> ServiceRun {
        let started = DispatchTime.now().uptimeNanoseconds
        let chains = (0 ..< concurrency).map { chain in stride(from: chain, to: count, by: concurrency).map { $0 } }
        let results = await withTaskGroup(of: ([Double], Int).self) { group in
            for indices in chains {
                group.addTask {
                    var latencies: [Double] = [], failures = 0
                    for index in indices {
                        let begin = DispatchTime.now().uptimeNanoseconds
                        if await !call(index) { failures += 1 }
                        latencies.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
                    }
                    return (latencies, failures)
                }
            }
            var all: [([Double], Int)] = []
            for await result in group { all.append(result) }
            return all
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return ServiceRun(wall: wall, latencies: results.flatMap(\.0), failures: results.map(\.1).reduce(0, +))
    }

    /// One row for the runs without capture and one for the captured runs,
    /// whose ratio is the median of the per-round wall-time ratios.
    static func addRows(to table: inout Table, plain: [ServiceRun], captured: [ServiceRun], count: Int, target: Double, unit: String) {
        let ratios = zip(captured, plain).map { $0.wall / $1.wall }
        for (label, runs) in [("no capture", plain), ("captured, netinspect reading (another process)", captured)] where !runs.isEmpty {
            let wall = median(runs.map(\.wall))
            let latencies = runs.flatMap(\.latencies).sorted()
            let isCaptured = runs.first?.flowsExpected ?? 0 > 0
            let shown = runs.map(\.flowsShown).reduce(0, +), expected = runs.map(\.flowsExpected).reduce(0, +)
            var notes: [String] = []
            if isCaptured {
                notes.append(String(format: "target ≤ %.2fx: %@; per round %@", target, median(ratios) <= target ? "met" : "MISSED",
                                    ratios.map { format($0, 2) + "x" }.joined(separator: ", ")))
                notes.append("\(runs.map(\.dropped).reduce(0, +)) events dropped")
            }
            let failures = runs.map(\.failures).reduce(0, +)
            if failures > 0 { notes.append("\(failures) \(unit) FAILED") }
            table.add([label, "\(count) x \(runs.count)", formatCount(Double(count) / wall),
                       format(percentile(latencies, 0.5) * 1000, 2), format(percentile(latencies, 0.99) * 1000, 2),
                       isCaptured ? format(median(ratios), 2) + "x" : "-",
                       isCaptured ? "\(shown)/\(expected)" : "-", notes.joined(separator: "; ")])
        }
    }
}
