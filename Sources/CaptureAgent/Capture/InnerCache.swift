import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The inner session's `URLCache`: the original session's cache, with the
/// lookup done once per request instead of twice.
///
/// corelibs looks every data task's request up in its session's cache before
/// it creates the task's protocol: a hop to a background queue and, for the
/// default cache, an identifier hashed from the request and a search of
/// the memory and disk indexes (docs/BENCHMARKS.md, "Costs behind the code"). By the time the capture
/// protocol starts, the original task's lookup has run and its result is the
/// protocol's `cachedResponse`; the inner task is handed that result instead
/// of looking again. Everything else goes to the original cache unchanged,
/// so what is cached, and when, is what it would be without the agent
/// (corelibs lets only its own HTTP protocol, the inner one, store responses).
/// corelibs asks a session's cache only for the lookups, stores and removals
/// forwarded below; capacities and usage are the original cache's business.
final class InnerCache: URLCache, @unchecked Sendable {
    /// The original session's cache.
    let base: URLCache
    /// Lookup results waiting for their inner task, by inner task identifier.
    private let handedOver = Locked<[Int: CachedURLResponse?]>([:])

    init(base: URLCache) {
        self.base = base
        // No storage of its own: "/dev/null" is not a directory, so the
        // superclass keeps no disk directory (and creates none).
        super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: "/dev/null")
    }

    /// `response` (possibly nil: nothing cached) is the lookup result for
    /// the inner task `taskIdentifier`, which has not been resumed yet.
    func handOver(_ response: CachedURLResponse?, toTask taskIdentifier: Int) {
        handedOver.withLock { $0[taskIdentifier] = .some(response) }
    }

    /// Drops a result that was never asked for (the task ended first).
    func forget(task taskIdentifier: Int) {
        _ = handedOver.withLock { $0.removeValue(forKey: taskIdentifier) }
    }

    /// Number of results waiting (for tests).
    var waitingCount: Int { handedOver.withLock { $0.count } }

    override func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        if let result = handedOver.withLock({ $0.removeValue(forKey: dataTask.taskIdentifier) }) {
            completionHandler(result)
        } else {
            base.getCachedResponse(for: dataTask, completionHandler: completionHandler)
        }
    }

    override func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        base.cachedResponse(for: request)
    }

    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        base.storeCachedResponse(cachedResponse, for: request)
    }

    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        base.storeCachedResponse(cachedResponse, for: dataTask)
    }

    override func removeCachedResponse(for request: URLRequest) {
        base.removeCachedResponse(for: request)
    }

    override func removeCachedResponse(for dataTask: URLSessionDataTask) {
        base.removeCachedResponse(for: dataTask)
    }

    override func removeAllCachedResponses() {
        base.removeAllCachedResponses()
    }

    override func removeCachedResponses(since date: Date) {
        base.removeCachedResponses(since: date)
    }
}
