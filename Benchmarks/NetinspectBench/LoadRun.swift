import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A closed-loop load generator: `concurrency` chains of requests, each
/// starting its next request from the completion handler of the previous
/// one, until `requests.count` requests have completed.
///
/// Latency is measured from just before `resume()` to the completion
/// handler; wall time from the first `resume()` to the last completion.
final class LoadRun: @unchecked Sendable {
    struct Outcome {
        var wall: Double
        /// Seconds, one per request, in request order.
        var latencies: [Double]
        /// Requests that failed or answered something unexpected.
        var failures: Int
        var firstFailure: String?
    }

    private let session: URLSession
    private let requests: [URLRequest]
    private let check: @Sendable (Data?, URLResponse?, (any Error)?) -> String?

    // Guarded by `lock`.
    private let lock = NSLock()
    private var next = 0
    private var completed = 0
    private var latencies: [Double]
    private var failures = 0
    private var firstFailure: String?
    private let done = DispatchSemaphore(value: 0)

    /// `check` returns why a response is wrong, or nil.
    init(session: URLSession, requests: [URLRequest],
         check: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> String?) {
        self.session = session
        self.requests = requests
        self.check = check
        self.latencies = Array(repeating: 0, count: requests.count)
    }

    /// Runs every request, `concurrency` at a time.
    /// - Throws: when the run has not finished after `timeout` seconds.
    func run(concurrency: Int, timeout: Double) throws -> Outcome {
        guard !requests.isEmpty else { return Outcome(wall: 0, latencies: [], failures: 0) }
        let started = DispatchTime.now().uptimeNanoseconds
        for _ in 0 ..< max(1, min(concurrency, requests.count)) { launch() }
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw BenchmarkError(description: "capture benchmark: \(requests.count) requests did not finish in \(Int(timeout)) s")
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return lock.withLock { Outcome(wall: wall, latencies: latencies, failures: failures, firstFailure: firstFailure) }
    }

    private func launch() {
        let index: Int? = lock.withLock {
            guard next < requests.count else { return nil }
            defer { next += 1 }
            return next
        }
        guard let index else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        let task = session.dataTask(with: requests[index]) { data, response, error in
            let latency = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let problem = self.check(data, response, error)
            let finished = self.lock.withLock {
                self.latencies[index] = latency
                if let problem {
                    self.failures += 1
                    if self.firstFailure == nil { self.firstFailure = problem }
                }
                self.completed += 1
                return self.completed == self.requests.count
            }
            if finished { self.done.signal() } else { self.launch() }
        }
        task.resume()
    }
}

/// The value at fraction `q` (0…1) of `sorted`, nearest rank.
func percentile(_ sorted: [Double], _ q: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
