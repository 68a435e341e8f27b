import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Mode (d) of section 1: the approach CaptureAgent's demux replaces
/// (netfox, Wormholy): a `URLProtocol` that re-sends every request through a
/// brand-new `URLSession` of its own and forwards the outcome to its client.
///
/// Made to work on Linux as docs/AGENT.md ("How it captures, and what differs
/// on Linux") requires: `startLoading` hops off the task's work queue before
/// creating anything;
/// the recursion guard is the inner configuration (the default protocol
/// classes, without this one), not a request property; the body goes to the
/// client in one `didLoad`. It records nothing: what is measured is the cost
/// of one session (and so one libcurl multi handle and one connection) per
/// request, not of logging.
final class NaiveCaptureProtocol: URLProtocol {
    private static let created = Mutex(0)

    /// Inner sessions created so far, one per request.
    static var sessionsCreated: Int { created.withLock { $0 } }

    /// Foundation's own classes: the inner sessions never come back here.
    fileprivate static let innerProtocolClasses: [AnyClass] = URLSessionConfiguration.default.protocolClasses ?? []

    /// Puts the naive class first, where Foundation asks first.
    static func install(in configuration: URLSessionConfiguration) {
        configuration.protocolClasses = [NaiveCaptureProtocol.self] + (configuration.protocolClasses ?? [])
    }

    fileprivate static func countSession() { created.withLock { $0 += 1 } }

    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    private var relay: NaiveRelay?

    override func startLoading() {
        // On the task's work queue, which every session's work queue
        // targets: creating a session or task here would deadlock, so the
        // relay does it on its own queue.
        let relay = NaiveRelay(owner: self, clientQueue: task.flatMap(Self.workQueue(of:)))
        self.relay = relay
        relay.start(request)
    }

    /// The task's private work queue (internal `URLSessionTask.workQueue`).
    /// corelibs' protocol client reads the session's task registry, which
    /// only that queue may touch: called from any other thread it races the
    /// registry's updates for other tasks and crashed this benchmark at
    /// concurrency 16. So the client is called there, as Foundation's own
    /// HTTP protocol calls it.
    static func workQueue(of task: URLSessionTask) -> DispatchQueue? {
        var mirror: Mirror? = Mirror(reflecting: task)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == "workQueue" }) { return child.value as? DispatchQueue }
            mirror = current.superclassMirror
        }
        return nil
    }

    override func stopLoading() {
        relay?.cancel()
    }
}

/// The per-request state of ``NaiveCaptureProtocol`` (`URLProtocol` is not
/// `Sendable`): its state lives on `queue`; the client is called on the
/// task's work queue.
private final class NaiveRelay: @unchecked Sendable {
    private let queue = DispatchQueue(label: "netinspect-bench.naive")
    private let clientQueue: DispatchQueue?
    // Touched only on `queue`. The owner is released once the client has been told the outcome.
    private var owner: NaiveCaptureProtocol?
    private var innerTask: URLSessionDataTask?

    init(owner: NaiveCaptureProtocol, clientQueue: DispatchQueue?) {
        self.owner = owner
        self.clientQueue = clientQueue
    }

    func start(_ request: URLRequest) {
        queue.async { self.send(request) }
    }

    func cancel() {
        queue.async {
            // A cancelled task reports the cancellation itself.
            self.owner = nil
            self.innerTask?.cancel()
            self.innerTask = nil
        }
    }

    private func send(_ request: URLRequest) {
        guard owner != nil else { return }
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = NaiveCaptureProtocol.innerProtocolClasses
        let session = URLSession(configuration: configuration)
        NaiveCaptureProtocol.countSession()
        let task = session.dataTask(with: request) { data, response, error in
            self.queue.async { self.finish(data: data, response: response, error: error) }
            session.finishTasksAndInvalidate()
        }
        innerTask = task
        task.resume()
    }

    private func finish(data: Data?, response: URLResponse?, error: (any Error)?) {
        innerTask = nil
        guard let owner else { return }
        self.owner = nil
        guard let clientQueue else { return Self.tell(owner, data: data, response: response, error: error) }
        let box = UncheckedBox(owner)
        clientQueue.async { Self.tell(box.value, data: data, response: response, error: error) }
    }

    private static func tell(_ owner: NaiveCaptureProtocol, data: Data?, response: URLResponse?, error: (any Error)?) {
        guard let client = owner.client else { return }
        if let error {
            client.urlProtocol(owner, didFailWithError: error)
            return
        }
        if let response {
            client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed)
        }
        if let data, !data.isEmpty {
            client.urlProtocol(owner, didLoad: data)
        }
        client.urlProtocolDidFinishLoading(owner)
    }
}

/// Carries a non-`Sendable` value to a queue that alone uses it from then on.
private struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
