import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The `URLProtocol` the agent puts first in a session's `protocolClasses`.
///
/// It loads nothing itself. In `startLoading()` it picks a ``CapturePath``
/// for the task:
/// - in place (almost every task): it creates the protocol that would have
///   run the task without the agent (``NextProtocol``), bound to the app's
///   own task, with a ``RecordingClient``, and forwards `startLoading` and
///   `stopLoading` to it synchronously; corelibs runs the task natively and
///   ``InPlaceFlow`` records what the client is told.
/// - re-sent (data tasks whose body goes straight to a session data
///   delegate, and stream bodies): its ``CaptureFlow`` re-sends the request
///   through the inner session of the original session's ``Demux`` and
///   replays the inner callbacks to this instance's client.
final class CaptureURLProtocol: URLProtocol {
    private enum Mode {
        case idle
        case inPlace(next: URLProtocol, flow: InPlaceFlow?)
        case resent(CaptureFlow)
    }

    // Touched only on the task's work queue (`startLoading`/`stopLoading`).
    private var mode = Mode.idle

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

    /// The path this instance took (for tests); nil before it started.
    var path: CapturePath? {
        switch mode {
        case .idle: nil
        case .inPlace: .inPlace
        case .resent: .resent
        }
    }

    /// Runs on the task's work queue, which every session's work queue
    /// targets: creating or resuming another task from here deadlocks. The
    /// in-place path creates a protocol, not a task, and starts it right here,
    /// as corelibs would have; the re-sending path does the rest on its queue.
    override func startLoading() {
        switch mode {
        case .inPlace(let next, _):
            // `resume()` after `suspend()` calls this again on the same instance.
            return next.startLoading()
        case .resent(let flow):
            return flow.resume()
        case .idle:
            break
        }
        guard let task else { return }
        // `canInit` just said yes for the active agent; if it stopped in
        // between, the flow still runs through the agent that accepted it.
        let agent = AgentRegistry.active ?? AgentRegistry.mostRecent
        let internals = TaskInternals(of: task)
        if let agent, ObservedProtocols.isReSending(internals.session),
           let nextClass = NextProtocol.protocolClass(
               for: task.currentRequest ?? request,
               sessionClasses: internals.session?.configuration.protocolClasses,
               defaults: agent.defaultProtocolClasses
           ) {
            // The app's own protocol re-sending a task the agent already
            // records where the app made it: run it as without the agent.
            let next = nextClass.init(task: task, cachedResponse: cachedResponse, client: client)
            mode = .inPlace(next: next, flow: nil)
            agent.count(.duplicate)
            return next.startLoading()
        }
        // A request a viewer's rule changes (or answers) goes the re-sending
        // path, which can send a request other than the app's. Download
        // tasks stay in place: the re-sending path cannot run them.
        let isDownload = task is URLSessionDownloadTask
        let ruled: RuleSet.Outcome = isDownload ? .unchanged : agent?.rules.rules.apply(to: task.originalRequest ?? request) ?? .unchanged
        // While a viewer asks for breakpoints every flow goes the re-sending
        // path, the one that can hold a request, and a response before the app sees it.
        let intercepting = !isDownload && agent.map { $0.allowsControl && $0.breakpoints.isActive } ?? false
        if let agent, case .unchanged = ruled, !intercepting,
           CapturePath.choose(for: task, request: request, internals: internals) == .inPlace,
           let nextClass = NextProtocol.protocolClass(
               for: task.currentRequest ?? request,
               sessionClasses: internals.session?.configuration.protocolClasses,
               defaults: agent.defaultProtocolClasses
           ),
           let client {
            let flow = InPlaceFlow(agent: agent, task: task, request: task.originalRequest ?? request, internals: internals)
            let next = nextClass.init(task: task, cachedResponse: cachedResponse, client: RecordingClient(forwardingTo: client, flow: flow))
            mode = .inPlace(next: next, flow: flow)
            agent.count(.inPlace)
            flow.starting(native: next)
            next.startLoading()
            return
        }
        let flow = CaptureFlow(agent: agent)
        flow.owner = self
        mode = .resent(flow)
        agent?.count(.resent)
        flow.begin(task: task, request: request, internals: internals, cachedResponse: cachedResponse, rules: ruled,
                   intercepting: intercepting)
    }

    override func stopLoading() {
        // `suspend()` and `cancel()` both end up here; only the state tells them apart.
        let suspending = task?.state == .suspended
        switch mode {
        case .idle:
            break
        case .inPlace(let next, let flow):
            // corelibs set `task.error` before calling this, and reports the
            // cancellation to the client itself, past the recording client.
            if !suspending { flow?.cancelled(native: next) }
            next.stopLoading()
            if suspending { flow?.suspended() }
        case .resent(let flow):
            if suspending { flow.suspend() } else { flow.cancel() }
        }
    }
}

/// One captured exchange: the inner task, the recorder, and the replay of
/// inner callbacks to the original task's client.
///
/// All mutable state lives on `queue`, a private serial queue per flow, from
/// which the client is called, in order.
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
    /// Whether the viewer's breakpoints may hold this flow.
    private var intercepting = false
    /// What a flow held before its request goes out needs to go on.
    private struct HeldRequest {
        var request: URLRequest
        var appRequest: URLRequest
        var body: TaskInternals.Body
        var internals: TaskInternals
        var cachedResponse: CachedURLResponse?
        var demux: Demux
        var changes: FlowChanges?
    }
    private var heldRequest: HeldRequest?
    /// A response held before the app sees it: the head, then the whole body.
    private struct HeldResponse {
        var head: URLResponse
        var body = Data()
        var complete = false
    }
    private var heldResponse: HeldResponse?
    private var completionTaskDelegate: URLSessionDataDelegate?
    private var bufferedBody = Data()
    /// True once the client has been told how the task ended, or the task
    /// was cancelled (corelibs reports that itself): no more client calls.
    ///
    /// A client call for a task corelibs has already dropped from its
    /// registry traps ("a task that is not in the registry"), and a task is
    /// dropped soon after a cancellation. corelibs' `cancel()` marks the task
    /// `.canceling` on the task's work queue, then, in a later block on the
    /// same queue, calls `stopLoading()` and reports the cancellation. So the
    /// client is called on that work queue too (``workQueue``), only while
    /// the task is running or suspended, and holding this lock, which `cancel()`
    /// sets synchronously from `stopLoading()`: a call lands before the
    /// cancellation starts, or not at all. No client method waits on the
    /// work queue, so holding the lock across one cannot deadlock.
    private let clientGate = Locked(false)
    private var clientIsDone: Bool { clientGate.current }
    /// The original task's work queue; nil if it could not be read, and then
    /// the client is called from `queue` under the same lock.
    private var workQueue: DispatchQueue?

    init(agent: CaptureAgent?) {
        self.agent = agent
    }

    /// Calls the client, in order, unless the flow is done or the task is
    /// being cancelled; `finishing` makes this the last call. Call on `queue`.
    private func withClient(finishing: Bool = false, _ body: @escaping @Sendable (URLProtocolClient, CaptureURLProtocol) -> Void) {
        let deliver: @Sendable () -> Void = { [self] in
            clientGate.withLock { done in
                guard !done else { return }
                guard let owner, let task = owner.task, task.state == .running || task.state == .suspended else {
                    // Cancelling or completed (corelibs reports that itself), or gone.
                    done = true
                    return
                }
                if finishing { done = true }
                guard let client = owner.client else { return }
                body(client, owner)
            }
        }
        if let workQueue { workQueue.async(execute: deliver) } else { deliver() }
    }

    func resume() {
        queue.async { self.innerTask?.resume() }
    }

    func suspend() {
        queue.async { self.innerTask?.suspend() }
    }

    /// From `stopLoading()` on cancellation: synchronously ends client calls
    /// (see ``clientGate``), then cancels the inner task.
    func cancel() {
        clientGate.withLock { $0 = true }
        queue.async {
            // A held flow ends here: the hold's decision finds the client done.
            if self.heldRequest != nil || self.heldResponse?.complete == true, let id = self.recorder?.id {
                self.agent?.breakpoints.decide(id, .release(.cancelled))
            }
            self.innerTask?.cancel()
        }
    }

    // MARK: - Starting

    /// `cachedResponse`: what corelibs' cache lookup for `task` found, passed on to the inner task.
    /// `rules`: what the viewer's traffic rules made of the request.
    /// `intercepting`: the viewer's breakpoints may hold the flow.
    func begin(task: URLSessionTask, request: URLRequest, internals: TaskInternals, cachedResponse: CachedURLResponse?,
               rules: RuleSet.Outcome, intercepting: Bool = false) {
        queue.async {
            self.intercepting = intercepting
            self.start(task: task, request: request, internals: internals, cachedResponse: cachedResponse, rules: rules)
        }
    }

    private func start(task: URLSessionTask, request appRequest: URLRequest, internals: TaskInternals, cachedResponse: CachedURLResponse?,
                       rules: RuleSet.Outcome) {
        self.task = task
        workQueue = internals.workQueue
        guard let agent else { return fail(URLError(.unknown)) }
        var request = appRequest
        var changes: FlowChanges?
        switch rules {
        case .unchanged:
            break
        case .send(let changed, let applied):
            request = changed
            changes = applied
        case .answer(let response, let data, let applied):
            return answerLocally(task: task, request: appRequest, internals: internals, response: response, data: data, changes: applied)
        }
        original = internals.session
        let consumer = internals.consumer
        delivery = consumer.delivery
        completionTaskDelegate = consumer.completionTaskDelegate as? URLSessionDataDelegate
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

        if agent.allowsControl {
            if let origin = agent.replays.origin(of: task) {
                changes = changes ?? FlowChanges(rules: [])
                changes?.replayOf = origin.id
                if origin.edited { changes?.edited = [.request] }
            }
            let body: Data? = if case .data(let data)? = internals.body { data } else { appRequest.httpBody }
            agent.replays.remember(recorder.id, request: appRequest, body: body, configuration: internals.session?.configuration)
        }
        if let changes { recorder.setChanges(changes) }

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
        if intercepting {
            var pending = recorder
            if case .data(let data) = body { pending.setRequestBody(CapturedBody(capturing: data, cap: limit)) }
            if agent.breakpoints.matches(pending.log) {
                self.recorder = pending
                agent.emit(pending.started())
                agent.emit(.held(FlowHold(id: pending.id, phase: .request, timeout: agent.breakpoints.timeout)))
                heldRequest = HeldRequest(request: request, appRequest: appRequest, body: body, internals: internals,
                                          cachedResponse: cachedResponse, demux: demux, changes: changes)
                agent.breakpoints.hold(pending.id, phase: .request) { decision in
                    self.queue.async { self.endRequestHold(decision) }
                }
                return
            }
        }
        launch(request: request, body: body, recorder: recorder, announce: true, internals: internals, cachedResponse: cachedResponse, demux: demux)
    }

    /// Sends `request` through the inner session; `announce`: emit `flowStarted` first.
    private func launch(request: URLRequest, body: TaskInternals.Body, recorder recorded: FlowRecorder, announce: Bool,
                        internals: TaskInternals, cachedResponse: CachedURLResponse?, demux: Demux) {
        guard let agent, let task else { return }
        var recorder = recorded
        let limit = agent.configuration.bodyCaptureLimit
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
        if announce { agent.emit(recorder.started()) }
        // The demux may have been invalidated since it was looked up (the
        // agent stopped); a fresh one serves, else the task fails cleanly.
        guard let inner = demux.task(for: self, cachedResponse: cachedResponse, make)
            ?? agent.demuxes.demux(for: internals.session).task(for: self, cachedResponse: cachedResponse, make)
        else {
            return fail(URLError(.cancelled))
        }
        innerTask = inner
        inner.resume()
        if case .none = body { self.recorder?.markRequestSent() }
    }

    // MARK: - Breakpoints (on `queue`)

    /// The viewer (or a timeout, or the app) decided about a held request.
    private func endRequestHold(_ decision: Breakpoints.Decision) {
        guard let held = heldRequest, var recorder, let agent else { return }
        heldRequest = nil
        agent.emit(.released(FlowRelease(id: recorder.id, phase: .request, reason: decision.reason)))
        if case .kill = decision {
            return endHeld(cancellingTask: true)
        }
        guard !clientIsDone else {
            // The app cancelled the task while it was held; corelibs reports that.
            return endHeld(cancellingTask: false)
        }
        var request = held.request
        var body = held.body
        var announce = false
        if case .resume(let resume?) = decision, let edit = resume.request {
            let originalBody: Data? = if case .data(let data) = held.body { data } else { nil }
            request = Breakpoints.request(edit, applyingTo: held.request, body: originalBody, marker: agent.configuration.redactionMarker)
            let keepsBody = edit.body?.isTruncated == true
            if !keepsBody { body = request.httpBody.map { .data($0) } ?? .none }
            recorder.replaceRequest(request, additionalHeaders: held.internals.session?.configuration.httpAdditionalHeaders, keepingBody: keepsBody)
            var changes = held.changes ?? FlowChanges(rules: [])
            changes.edited = [.request]
            if request.url != held.appRequest.url { changes.originalURL = changes.originalURL ?? held.appRequest.url?.absoluteString }
            let appHeaders = FlowRecorder.sortedHeaders(held.appRequest.allHTTPHeaderFields ?? [:])
            if FlowRecorder.sortedHeaders(request.allHTTPHeaderFields ?? [:]) != appHeaders {
                changes.originalHeaders = changes.originalHeaders ?? appHeaders
            }
            recorder.setChanges(changes)
            announce = true
        }
        launch(request: request, body: body, recorder: recorder, announce: announce, internals: held.internals,
               cachedResponse: held.cachedResponse, demux: held.demux)
    }

    /// Ends a held flow as cancelled, without (more) network. A kill
    /// (`cancellingTask`) cancels the app's task, so the app sees exactly
    /// what a cancellation shows, `task.error` included: corelibs sets that
    /// on `cancel()`, never from a custom protocol's failure.
    private func endHeld(cancellingTask: Bool) {
        if let recorder {
            agent?.emit(recorder.finished(error: URLError(.cancelled), requestBody: requestStream.current?.captured))
        }
        let appTask = task
        recorder = nil
        original = nil
        task = nil
        completionTaskDelegate = nil
        streamSource.withLock { $0 = nil }
        if cancellingTask { appTask?.cancel() }
    }

    /// The viewer (or a timeout, or the app) decided about a held response.
    private func endResponseHold(_ decision: Breakpoints.Decision) {
        guard let held = heldResponse, held.complete, var recorder, let agent else { return }
        heldResponse = nil
        agent.emit(.released(FlowRelease(id: recorder.id, phase: .response, reason: decision.reason)))
        if case .kill = decision {
            return endHeld(cancellingTask: true)
        }
        guard !clientIsDone else { return endHeld(cancellingTask: false) }
        var head = held.head
        var body = held.body
        if case .resume(let resume?) = decision, let edit = resume.response, let http = head as? HTTPURLResponse {
            let original = recorder.currentResponse
            (head, body) = {
                let (response, data) = Breakpoints.response(edit, applyingTo: http, body: held.body, marker: agent.configuration.redactionMarker)
                return (response as URLResponse, data)
            }()
            if let response = head as? HTTPURLResponse { recorder.replaceResponse(response, body: body) }
            var edited = recorder.changes ?? FlowChanges(rules: [])
            edited.edited = (edited.edited ?? []) + [.response]
            edited.originalResponse = original
            recorder.setChanges(edited, afterStart: true)
        }
        agent.emit(recorder.finished(error: nil, requestBody: requestStream.current?.captured))
        self.recorder = nil
        deliverWhole(head: head, body: body)
    }

    /// Gives the app a whole response at once (one held at a breakpoint).
    private func deliverWhole(head: URLResponse, body: Data) {
        let delivery = delivery
        if delivery == .wholeBodyOnce, !body.isEmpty, let delegate = completionTaskDelegate, let original,
           let dataTask = task as? URLSessionDataTask {
            original.delegateQueue.addOperation {
                delegate.urlSession(original, dataTask: dataTask, didReceive: body)
            }
        }
        original = nil
        task = nil
        completionTaskDelegate = nil
        streamSource.withLock { $0 = nil }
        withClient { client, owner in client.urlProtocol(owner, didReceive: head, cacheStoragePolicy: .notAllowed) }
        withClient(finishing: true) { client, owner in
            if !body.isEmpty { client.urlProtocol(owner, didLoad: body) }
            client.urlProtocolDidFinishLoading(owner)
        }
    }

    /// A map-local rule answered: the app gets the file as a response, and
    /// nothing goes on the network.
    private func answerLocally(task: URLSessionTask, request: URLRequest, internals: TaskInternals,
                               response: HTTPURLResponse, data: Data, changes: FlowChanges) {
        guard let agent else { return }
        var recorder = FlowRecorder(
            request: request,
            additionalHeaders: internals.session?.configuration.httpAdditionalHeaders,
            sessionID: agent.demuxes.demux(for: internals.session).sessionID,
            taskID: task.taskIdentifier,
            configuration: agent.configuration,
            clock: agent.clock
        )
        recorder.setChanges(changes)
        if let body = request.httpBody { recorder.setRequestBody(CapturedBody(capturing: body, cap: agent.configuration.bodyCaptureLimit)) }
        agent.emit(recorder.started())
        recorder.markRequestSent()
        agent.emit(recorder.received(response))
        recorder.receivedBody(data)
        agent.emit(recorder.finished(error: nil, requestBody: nil))
        self.task = nil
        withClient { client, owner in
            client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed)
            if !data.isEmpty { client.urlProtocol(owner, didLoad: data) }
        }
        withClient(finishing: true) { client, owner in client.urlProtocolDidFinishLoading(owner) }
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
        withClient(finishing: true) { client, owner in client.urlProtocol(owner, didFailWithError: error) }
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
            // A breakpoint decides on the response head; the app sees it once the hold ends.
            if self.intercepting, let agent = self.agent, let log = self.recorder?.log, agent.breakpoints.matches(log) {
                self.heldResponse = HeldResponse(head: response)
                return
            }
            self.heldResponse = nil
            // Custom protocols are never cached by corelibs; say so explicitly.
            self.withClient { client, owner in client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed) }
        }
    }

    func innerDidReceive(_ data: Data) {
        queue.async {
            self.recorder?.receivedBody(data)
            if var held = self.heldResponse {
                held.body.append(data)
                guard held.body.count > Self.heldBodyLimit(self.agent) else {
                    self.heldResponse = held
                    return
                }
                // Too large to hold whole: the app gets it unheld, as it comes,
                // so a breakpoint never costs more memory than the capture limit.
                self.heldResponse = nil
                let head = held.head
                self.withClient { client, owner in client.urlProtocol(owner, didReceive: head, cacheStoragePolicy: .notAllowed) }
                return self.forward(held.body)
            }
            self.forward(data)
        }
    }

    /// The most of a response body a breakpoint holds back: the capture limit.
    private static func heldBodyLimit(_ agent: CaptureAgent?) -> Int {
        agent?.configuration.bodyCaptureLimit ?? 0
    }

    /// Passes response body bytes on to the app, as its task expects them. Call on `queue`.
    private func forward(_ data: Data) {
        guard !clientIsDone else { return }
        switch delivery {
        case .delegateChunks:
            withClient { client, owner in client.urlProtocol(owner, didLoad: data) }
        case .wholeBodyOnce:
            // `didLoad` replaces the stored body: hand it over once, whole.
            bufferedBody.append(data)
            // The client does not pass chunks to an async call's task delegate; corelibs does.
            if let delegate = completionTaskDelegate, let original, let dataTask = task as? URLSessionDataTask {
                original.delegateQueue.addOperation {
                    delegate.urlSession(original, dataTask: dataTask, didReceive: data)
                }
            }
        }
    }

    func innerDidComplete(error: Error?) {
        queue.async {
            if self.heldResponse != nil, error == nil, let agent = self.agent, let recorder = self.recorder, !self.clientIsDone {
                // The whole response is in: hold it for the viewer.
                self.heldResponse?.complete = true
                agent.emit(.held(FlowHold(id: recorder.id, phase: .response, response: recorder.currentResponse,
                                          timeout: agent.breakpoints.timeout)))
                agent.breakpoints.hold(recorder.id, phase: .response) { decision in
                    self.queue.async { self.endResponseHold(decision) }
                }
                return
            }
            if let held = self.heldResponse {
                // Failed after the head (or cancelled): the app gets what it was owed, then the outcome.
                self.heldResponse = nil
                self.withClient { client, owner in client.urlProtocol(owner, didReceive: held.head, cacheStoragePolicy: .notAllowed) }
                self.forward(held.body)
            }
            if let recorder = self.recorder {
                self.agent?.emit(recorder.finished(error: error, requestBody: self.requestStream.current?.captured))
                self.recorder = nil
            }
            self.original = nil
            self.task = nil
            self.completionTaskDelegate = nil
            self.streamSource.withLock { $0 = nil }
            let body = self.delivery == .wholeBodyOnce ? self.bufferedBody : Data()
            self.bufferedBody = Data()
            self.withClient(finishing: true) { client, owner in
                if let error { return client.urlProtocol(owner, didFailWithError: error) }
                if !body.isEmpty { client.urlProtocol(owner, didLoad: body) }
                client.urlProtocolDidFinishLoading(owner)
            }
        }
    }
}
