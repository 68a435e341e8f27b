import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The `URLProtocol` the agent puts first in a session's `protocolClasses`.
///
/// It does not load anything itself: its ``CaptureFlow`` re-sends the task's
/// request through the inner session of the original session's ``Demux``,
/// records what happens, and replays the inner callbacks to this instance's
/// client. (`URLProtocol` is not `Sendable`; the flow is, and holds this
/// instance weakly: the task keeps it alive until it has completed.)
final class CaptureURLProtocol: URLProtocol {
    private let flow: CaptureFlow
    // Touched only on the task's work queue.
    private var hasStarted = false

    override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let agent = AgentRegistry.active
        else { return false }
        return agent.configuration.shouldCapture(url)
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        a == b
    }

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: URLProtocolClient?) {
        // `canInit` just said yes for the active agent; if it stopped in
        // between, the flow still runs through the agent that accepted it.
        flow = CaptureFlow(agent: AgentRegistry.active ?? AgentRegistry.mostRecent)
        super.init(request: request, cachedResponse: cachedResponse, client: client)
        flow.owner = self
    }

    /// Runs on the task's work queue, which every session's work queue
    /// targets: creating or resuming a task from here deadlocks. So only
    /// what must be read here is read here; the flow does the rest on its queue.
    override func startLoading() {
        guard !hasStarted else {
            // `resume()` after `suspend()` calls this again on the same instance.
            return flow.resume()
        }
        hasStarted = true
        guard let task else { return }
        flow.begin(task: task, request: request, internals: TaskInternals(of: task))
    }

    override func stopLoading() {
        // `suspend()` and `cancel()` both end up here; only the state tells them apart.
        if task?.state == .suspended {
            flow.suspend()
        } else {
            flow.cancel()
        }
    }
}

/// One captured exchange: the inner task, the recorder, and the replay of
/// inner callbacks to the original task's client.
///
/// All mutable state lives on `queue`, a private serial queue per flow. The
/// client is called from there, in order, through the task's work queue
/// (see ``tellClient(_:)``).
final class CaptureFlow: @unchecked Sendable {
    private let agent: CaptureAgent?
    private let queue = DispatchQueue(label: "netinspect.CaptureAgent.flow")
    weak var owner: CaptureURLProtocol?

    // Touched only on `queue`.
    private var task: URLSessionTask?
    private var innerTask: URLSessionTask?
    private var original: URLSession?
    private var recorder: FlowRecorder?
    /// Set on `queue` or (for streamed uploads) on the inner work queue.
    private let requestStream = Locked<TeeInputStream?>(nil)
    /// What a streamed upload's body request needs, readable off `queue`.
    private let streamSource = Locked<StreamSource?>(nil)

    private struct StreamSource: @unchecked Sendable {
        var task: URLSessionTask
        var original: URLSession
        var delegate: URLSessionTaskDelegate
        var limit: Int
    }
    private var delivery = TaskInternals.Delivery.wholeBodyOnce
    private var completionTaskDelegate: URLSessionDataDelegate?
    private var bufferedBody = Data()
    /// The client has been told how the task ended, or the task was
    /// cancelled (it reports that itself): no more client calls.
    private var clientIsDone = false

    init(agent: CaptureAgent?) {
        self.agent = agent
    }

    /// The original task's work queue; `nil` if it could not be read.
    private var clientQueue: DispatchQueue?

    /// Calls the client on the original task's work queue, in the order of
    /// the calls (each is made on `queue`). corelibs' protocol client reads
    /// the session's task registry, which only the work queue may touch:
    /// called from `queue` it raced the registry's updates for other tasks
    /// and crashed (`URLSession.behaviour(for:)`, a null dereference) at
    /// 16 concurrent tasks. Foundation's own HTTP protocol calls it there too.
    private func tellClient(_ call: @escaping (URLProtocolClient, CaptureURLProtocol) -> Void) {
        guard let owner, let client = owner.client else { return }
        guard let clientQueue else { return call(client, owner) }
        // `queue` hands these over and never touches them again.
        nonisolated(unsafe) let handover = (call, client, owner)
        clientQueue.async {
            // A task cancelled meanwhile has reported that itself (as before, when
            // `clientIsDone` stopped later calls): nothing more for its client.
            if let state = handover.2.task?.state, state == .canceling || state == .completed { return }
            handover.0(handover.1, handover.2)
        }
    }

    func resume() {
        queue.async { self.innerTask?.resume() }
    }

    func suspend() {
        queue.async { self.innerTask?.suspend() }
    }

    func cancel() {
        queue.async {
            self.clientIsDone = true
            self.innerTask?.cancel()
        }
    }

    // MARK: - Starting

    func begin(task: URLSessionTask, request: URLRequest, internals: TaskInternals) {
        queue.async { self.start(task: task, request: request, internals: internals) }
    }

    private func start(task: URLSessionTask, request: URLRequest, internals: TaskInternals) {
        self.task = task
        clientQueue = internals.workQueue
        guard let agent else { return fail(URLError(.unknown)) }
        original = internals.session
        delivery = internals.delivery
        completionTaskDelegate = internals.completionTaskDelegate as? URLSessionDataDelegate
        let demux = agent.demuxes.demux(for: internals.session)
        let limit = agent.configuration.bodyCaptureLimit
        var recorder = FlowRecorder(
            request: request,
            additionalHeaders: internals.session?.configuration.httpAdditionalHeaders,
            sessionID: demux.sessionID,
            taskID: task.taskIdentifier,
            configuration: agent.configuration,
            clock: agent.clock
        )

        if task is URLSessionDownloadTask {
            // corelibs hands a custom protocol's download to the app as a nil
            // file URL (a force-unwrap crash in `download(for:)`): refuse it clearly.
            let error = Self.downloadUnsupportedError(for: request)
            agent.emit(recorder.started())
            agent.emit(recorder.finished(error: error, requestBody: nil))
            fail(error)
            self.task = nil
            original = nil
            return
        }

        let body = internals.body ?? Self.body(in: request, of: task)
        let make: (URLSession) -> URLSessionTask
        switch body {
        case .none:
            make = { $0.dataTask(with: request) }
        case .data(let data):
            recorder.setRequestBody(CapturedBody(capturing: data, cap: limit))
            // An upload task's own body wins over `httpBody`, as in corelibs.
            if task is URLSessionUploadTask {
                make = { $0.uploadTask(with: request, from: data) }
            } else {
                make = { $0.dataTask(with: request) }
            }
        case .file(let url):
            recorder.setRequestBody(BodyCapture.capturing(fileAt: url, limit: limit))
            make = { $0.uploadTask(with: request, fromFile: url) }
        case .stream(let stream):
            let tee = TeeInputStream(source: stream, limit: limit)
            requestStream.withLock { $0 = tee }
            var streamed = request
            streamed.httpBodyStream = tee
            make = { $0.dataTask(with: streamed) }
        case .askDelegate:
            if let original, let delegate = task.delegate {
                streamSource.withLock { $0 = StreamSource(task: task, original: original, delegate: delegate, limit: limit) }
            }
            make = { $0.uploadTask(withStreamedRequest: request) }
        }

        self.recorder = recorder
        agent.emit(recorder.started())
        let inner = demux.task(for: self, make)
        innerTask = inner
        inner.resume()
        if case .none = body { self.recorder?.markRequestSent() }
    }

    /// What to send when the task's internal body could not be read.
    private static func body(in request: URLRequest, of task: URLSessionTask) -> TaskInternals.Body {
        if let data = request.httpBody { return .data(data) }
        if let stream = request.httpBodyStream { return .stream(stream) }
        return task is URLSessionUploadTask ? .askDelegate : .none
    }

    static func downloadUnsupportedError(for request: URLRequest) -> URLError {
        var info: [String: Any] = [
            NSLocalizedDescriptionKey:
                "netinspect CaptureAgent cannot run download tasks on Linux: swift-corelibs-foundation does not "
                + "support downloads through a custom URLProtocol. Use a data task, or exclude this URL from capture.",
        ]
        if let url = request.url {
            info[NSURLErrorFailingURLErrorKey] = url
        }
        return URLError(.unsupportedURL, userInfo: info)
    }

    private func fail(_ error: Error) {
        guard !clientIsDone else { return }
        clientIsDone = true
        tellClient { $0.urlProtocol($1, didFailWithError: error) }
    }

    // MARK: - Inner callbacks (on the demux's delegate queue; hop to `queue`)

    func innerWillRedirect(_ response: HTTPURLResponse, to newRequest: URLRequest, decide: @escaping @Sendable (URLRequest?) -> Void) {
        queue.async {
            guard !self.clientIsDone, let task = self.task, let original = self.original, let delegate = task.delegate else {
                // Without a delegate corelibs follows with the session's cookies added.
                let configured = self.original.map { Self.addingCookies(to: newRequest, from: $0.configuration) } ?? newRequest
                self.recorder?.redirected(response, to: configured)
                return decide(configured)
            }
            // The app's own redirect policy, asked the way corelibs asks it:
            // the task's delegate, on the original session's delegate queue.
            original.delegateQueue.addOperation {
                delegate.urlSession(original, task: task, willPerformHTTPRedirection: response, newRequest: newRequest) { decision in
                    self.queue.async {
                        if let decision { self.recorder?.redirected(response, to: decision) }
                        decide(decision)
                    }
                }
            }
        }
    }

    /// What corelibs does to a redirect it follows without a delegate
    /// (`URLSession._Configuration.setCookies(on:)`).
    static func addingCookies(to request: URLRequest, from configuration: URLSessionConfiguration) -> URLRequest {
        guard configuration.httpShouldSetCookies, let storage = configuration.httpCookieStorage, let url = request.url,
              let cookies = storage.cookies(for: url),
              let value = HTTPCookie.requestHeaderFields(with: cookies)["Cookie"], !value.isEmpty
        else { return request }
        var request = request
        request.setValue(value, forHTTPHeaderField: "Cookie")
        return request
    }

    func innerDidReceive(
        _ challenge: URLAuthenticationChallenge,
        answer: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        queue.async {
            guard !self.clientIsDone, let task = self.task, let original = self.original, let delegate = task.delegate else {
                return answer(.performDefaultHandling, nil)
            }
            original.delegateQueue.addOperation {
                delegate.urlSession(original, task: task, didReceive: challenge, completionHandler: answer)
            }
        }
    }

    /// Asked synchronously on the inner task's work queue, and corelibs goes
    /// on setting up the transfer inside `provide`. Answering from another
    /// thread races libcurl's multi handle (a `try!` crash in corelibs was
    /// seen under ThreadSanitizer), so the app's delegate is asked right
    /// here, on this thread, just as corelibs asks it without the agent.
    func innerNeedsBodyStream(_ provide: @escaping @Sendable (InputStream?) -> Void) {
        guard let source = streamSource.current else { return provide(nil) }
        source.delegate.urlSession(source.original, task: source.task) { stream in
            let tee = stream.map { TeeInputStream(source: $0, limit: source.limit) }
            self.requestStream.withLock { $0 = tee }
            provide(tee)
        }
    }

    func innerDidSendBody(_ sent: Int64, total: Int64, expected: Int64) {
        queue.async {
            self.recorder?.markRequestSent()
            guard !self.clientIsDone, self.delivery == .delegateChunks,
                  let task = self.task, let original = self.original, let delegate = task.delegate
            else { return }
            original.delegateQueue.addOperation {
                delegate.urlSession(original, task: task, didSendBodyData: sent, totalBytesSent: total, totalBytesExpectedToSend: expected)
            }
        }
    }

    func innerDidReceive(_ response: URLResponse) {
        queue.async {
            // A second response means corelibs retried (an answered 401):
            // as in its own transfer, only the last response's body counts.
            self.bufferedBody = Data()
            if let event = self.recorder?.received(response) { self.agent?.emit(event) }
            guard !self.clientIsDone else { return }
            // Custom protocols are never cached by corelibs; say so explicitly.
            self.tellClient { $0.urlProtocol($1, didReceive: response, cacheStoragePolicy: .notAllowed) }
        }
    }

    func innerDidReceive(_ data: Data) {
        queue.async {
            self.recorder?.receivedBody(data)
            guard !self.clientIsDone else { return }
            switch self.delivery {
            case .delegateChunks:
                self.tellClient { $0.urlProtocol($1, didLoad: data) }
            case .wholeBodyOnce:
                // `didLoad` replaces the stored body: hand it over once, whole.
                self.bufferedBody.append(data)
                // The client does not pass chunks to an async call's task delegate; corelibs does.
                if let delegate = self.completionTaskDelegate, let original = self.original,
                   let dataTask = self.task as? URLSessionDataTask {
                    original.delegateQueue.addOperation {
                        delegate.urlSession(original, dataTask: dataTask, didReceive: data)
                    }
                }
            }
        }
    }

    func innerDidComplete(error: Error?) {
        queue.async {
            if let recorder = self.recorder {
                self.agent?.emit(recorder.finished(error: error, requestBody: self.requestStream.current?.captured))
                self.recorder = nil
            }
            self.original = nil
            self.task = nil
            self.completionTaskDelegate = nil
            self.streamSource.withLock { $0 = nil }
            guard !self.clientIsDone else { return }
            self.clientIsDone = true
            if let error {
                return self.tellClient { $0.urlProtocol($1, didFailWithError: error) }
            }
            let body = self.delivery == .wholeBodyOnce ? self.bufferedBody : Data()
            self.bufferedBody = Data()
            self.tellClient { client, owner in
                if !body.isEmpty { client.urlProtocol(owner, didLoad: body) }
                client.urlProtocolDidFinishLoading(owner)
            }
        }
    }
}
