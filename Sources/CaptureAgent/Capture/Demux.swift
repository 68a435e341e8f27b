import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The inner `URLSession` that re-sends the requests of one original
/// session, and the delegate that hands its callbacks back to the capture
/// protocol instance of each task (by inner task identifier).
///
/// One per original session, reused for all of its tasks: the inner session
/// keeps the original configuration (timeouts, additional headers, cookie,
/// cache and credential storage), and connections are reused as they would
/// be without the agent.
final class Demux: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// Identifies the original session in the log (`NetworkLog.sessionID`).
    let sessionID: Int
    private(set) weak var original: URLSession?
    private let routes = Locked<[Int: ResendingFlow]>([:])
    // Set once in `init`, after `super.init()`; the inner session needs `self` as delegate.
    private(set) var session: URLSession!

    init(sessionID: Int, original: URLSession?, configuration: URLSessionConfiguration) {
        self.sessionID = sessionID
        self.original = original
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "netinspect.CaptureAgent.demux.\(sessionID)"
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Set when the inner session is invalidated; guarded by its own lock so
    /// that creating a task and invalidating never interleave.
    private let invalidated = Locked(false)

    /// Creates an inner task with `make` and routes its callbacks to `flow`
    /// before anyone can resume it; nil when the inner session has been
    /// invalidated (the agent stopped, or the original session went away),
    /// since creating a task on an invalidated session traps in corelibs.
    ///
    /// `cachedResponse` is what the original task's cache lookup found (the
    /// capture protocol's `cachedResponse`): the inner task gets it instead
    /// of looking up the same request again (see ``InnerCache``).
    func task(for flow: ResendingFlow, cachedResponse: CachedURLResponse?, _ make: (URLSession) -> URLSessionTask) -> URLSessionTask? {
        invalidated.withLock { isInvalidated in
            guard !isInvalidated else { return nil }
            let task = make(session)
            routes.withLock { $0[task.taskIdentifier] = flow }
            if task is URLSessionDataTask { innerCache?.handOver(cachedResponse, toTask: task.taskIdentifier) }
            return task
        }
    }

    /// The inner session's cache, when the original session has one.
    private var innerCache: InnerCache? { session.configuration.urlCache as? InnerCache }

    private func flow(for task: URLSessionTask) -> ResendingFlow? {
        routes.withLock { $0[task.taskIdentifier] }
    }

    func invalidate() {
        invalidated.withLock { isInvalidated in
            guard !isInvalidated else { return }
            isInvalidated = true
            session.finishTasksAndInvalidate()
        }
    }

    // MARK: URLSessionTaskDelegate

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let flow = flow(for: task) else { return completionHandler(request) }
        flow.innerWillRedirect(response, to: request, decide: completionHandler)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let flow = flow(for: task) else { return completionHandler(.performDefaultHandling, nil) }
        flow.innerDidReceive(challenge, answer: completionHandler)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        guard let flow = flow(for: task) else { return completionHandler(nil) }
        flow.innerNeedsBodyStream(completionHandler)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        flow(for: task)?.innerDidSendBody(bytesSent, total: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        // Removed first: a cancelled challenge can complete a task twice.
        let flow = routes.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        innerCache?.forget(task: task.taskIdentifier)
        flow?.innerDidComplete(error: error)
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        flow(for: dataTask)?.innerDidReceive(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        flow(for: dataTask)?.innerDidReceive(data)
    }
}

/// The demuxes of one agent, one per original session.
final class DemuxRegistry: @unchecked Sendable {
    private struct State {
        var demuxes: [ObjectIdentifier: Demux] = [:]
        var fallback: Demux?
        /// The log's identifier of each original session, on either path.
        var sessionIDs: [ObjectIdentifier: (session: Weak<URLSession>, id: Int)] = [:]
        /// Identifies flows whose session could not be read.
        var unknownSessionID: Int?

        mutating func sessionID(for session: URLSession?, numbers: Counter) -> Int {
            guard let session else {
                if let unknownSessionID { return unknownSessionID }
                let id = numbers.next()
                unknownSessionID = id
                return id
            }
            let key = ObjectIdentifier(session)
            if let known = sessionIDs[key], known.session.value === session { return known.id }
            if sessionIDs.count >= 64 { sessionIDs = sessionIDs.filter { $0.value.session.value != nil } }
            let id = numbers.next()
            sessionIDs[key] = (Weak(session), id)
            return id
        }
    }

    /// The log's identifier of `session` (`NetworkLog.sessionID`): the same
    /// for every flow of one session, whichever path captured it.
    func sessionID(for session: URLSession?) -> Int {
        state.withLock { $0.sessionID(for: session, numbers: sessionNumbers) }
    }

    private let state = Locked(State())
    private let defaultProtocolClasses: [AnyClass]
    private let sessionNumbers: Counter

    init(defaultProtocolClasses: [AnyClass], sessionNumbers: Counter) {
        self.defaultProtocolClasses = defaultProtocolClasses
        self.sessionNumbers = sessionNumbers
    }

    /// The demux of `original`, created on first use. `nil` (the session
    /// could not be read from the task) shares one demux with a default
    /// configuration.
    func demux(for original: URLSession?) -> Demux {
        var retired: [Demux] = []
        defer { retired.forEach { $0.invalidate() } }
        return state.withLock { state in
            // Sessions that are gone will send nothing more; their inner ones can go too.
            for (key, demux) in state.demuxes where demux.original == nil {
                retired.append(demux)
                state.demuxes[key] = nil
            }
            guard let original else {
                if let fallback = state.fallback { return fallback }
                let demux = makeDemux(&state, original: nil, configuration: .default)
                state.fallback = demux
                return demux
            }
            let key = ObjectIdentifier(original)
            if let existing = state.demuxes[key], existing.original === original { return existing }
            let demux = makeDemux(&state, original: original, configuration: original.configuration)
            state.demuxes[key] = demux
            return demux
        }
    }

    private func makeDemux(_ state: inout State, original: URLSession?, configuration: URLSessionConfiguration) -> Demux {
        let inner = configuration.copy() as! URLSessionConfiguration
        inner.protocolClasses = innerProtocolClasses(from: configuration.protocolClasses)
        // The original session already put its cookies into the task's
        // request when the task was created; the inner one need not look them
        // up again. Cookies from responses are still stored: that does not
        // depend on this flag. (Redirects: see `addingCookies(to:from:)`.)
        inner.httpShouldSetCookies = false
        // The original task has looked its request up already; the inner
        // one takes that result rather than a second lookup.
        inner.urlCache = configuration.urlCache.map(InnerCache.init(base:))
        return Demux(sessionID: state.sessionID(for: original, numbers: sessionNumbers), original: original, configuration: inner)
    }

    /// The original classes without the capture class, so the inner session
    /// never recurses into capture (request properties do not survive on
    /// Linux, so a marker on the request cannot be the guard). Classes the
    /// app put after the capture class keep their place; with none left, the
    /// default HTTP classes.
    func innerProtocolClasses(from original: [AnyClass]?) -> [AnyClass] {
        let remaining = (original ?? []).filter { ObjectIdentifier($0) != ObjectIdentifier(CaptureURLProtocol.self) }
        return remaining.isEmpty ? defaultProtocolClasses : remaining
    }

    /// Inner sessions currently alive.
    var count: Int {
        state.withLock { $0.demuxes.count + ($0.fallback == nil ? 0 : 1) }
    }

    /// Lets running inner tasks finish, then releases every inner session.
    func invalidateAll() {
        let all = state.withLock { state -> [Demux] in
            let all = Array(state.demuxes.values) + (state.fallback.map { [$0] } ?? [])
            state.demuxes = [:]
            state.fallback = nil
            return all
        }
        all.forEach { $0.invalidate() }
    }
}

/// A weak reference, for keeping track of objects without keeping them alive.
struct Weak<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object?) { self.value = value }
}
