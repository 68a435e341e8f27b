import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// One exchange on the re-sending path: the inner task, the recorder, and
/// the replay of inner callbacks to the original task's client. What the
/// viewer's control does to it is decided by its ``ExchangeControl``; this
/// class only carries it out in URLSession's terms.
///
/// All mutable state lives on `queue`, a private serial queue per flow, from
/// which the client is called, in order.
final class ResendingFlow: @unchecked Sendable {
    let agent: CaptureAgent?
    let queue = DispatchQueue(label: "netinspect.CaptureAgent.flow")
    weak var owner: CaptureURLProtocol?

    // Touched only on `queue`.
    var task: URLSessionTask?
    var innerTask: URLSessionTask?
    var original: URLSession?
    /// The exchange's flow, once started: its recorder, its events and what
    /// they count when it is not built.
    var flow: FlowRecording?
    /// Set on `queue` or (for streamed uploads) on the inner work queue.
    let requestStream = Locked<TeeInputStream?>(nil)
    /// What a streamed upload's body request needs, readable off `queue`.
    let streamSource = Locked<StreamSource?>(nil)

    struct StreamSource: @unchecked Sendable {
        var task: URLSessionTask
        var original: URLSession
        var delegate: URLSessionTaskDelegate
        var limit: Int
    }
    var delivery = TaskInternals.Delivery.wholeBodyOnce
    /// The viewer's rules and breakpoints for this exchange.
    /// The viewer's control as it decided the start (its effect and changes
    /// are read before the flow exists); ``controlled`` from then on.
    var started = ControlledFlow.Decision.none
    /// The flow under the viewer's control, once built: it decides and
    /// records the holds and edits.
    var controlled: ControlledFlow?
    /// What a flow held before its request goes out needs to go on.
    private struct HeldRequest {
        var request: URLRequest
        var body: TaskInternals.Body
        var internals: TaskInternals
        var cachedResponse: CachedURLResponse?
        var demux: Demux
    }
    private var heldRequest: HeldRequest?
    /// A response held before the app sees it: the head, then the whole body.
    struct HeldResponse {
        var head: URLResponse
        var body = Data()
        var complete = false
    }
    var heldResponse: HeldResponse?
    /// The response's wait and pace under a network condition (ResendingFlow+Conditions.swift).
    var responsePace: ResponsePace?
    var completionTaskDelegate: URLSessionDataDelegate?
    /// The delegate corelibs tells about body bytes sent, and counts them
    /// for: the session's, or an async call's task delegate; nil otherwise.
    var uploadDelegate: URLSessionTaskDelegate?
    var bufferedBody = Data()
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
    var clientIsDone: Bool { clientGate.current }
    /// The original task's work queue; nil if it could not be read, and then
    /// the client is called from `queue` under the same lock.
    private var workQueue: DispatchQueue?

    /// The inbound flow the app was handling when it made the request; set
    /// before ``begin(task:request:internals:cachedResponse:control:started:)``.
    var parentID: FlowID?

    init(agent: CaptureAgent?) {
        self.agent = agent
    }

    /// Calls the client, in order, unless the flow is done or the task is
    /// being cancelled; `finishing` makes this the last call. Call on `queue`.
    func withClient(finishing: Bool = false, _ body: @escaping @Sendable (URLProtocolClient, CaptureURLProtocol) -> Void) {
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
            if self.heldRequest != nil || self.heldResponse?.complete == true, let id = self.flow?.id {
                self.agent?.breakpoints.decide(id, .release(.cancelled))
            }
            self.innerTask?.cancel()
            // A response a network condition keeps waiting ends now, not when its timer fires.
            self.drainPaced()
        }
    }

    // MARK: - Starting

    /// `cachedResponse`: what corelibs' cache lookup for `task` found, passed on to the inner task.
    /// `decided`: the viewer's control's decision on the request, made
    /// before this path was chosen (``ControlledFlow/decide(_:agent:policy:)``).
    func begin(task: URLSessionTask, request: URLRequest, internals: TaskInternals, cachedResponse: CachedURLResponse?,
               decided: ControlledFlow.Decision) {
        queue.async {
            self.started = decided
            self.start(task: task, request: request, internals: internals, cachedResponse: cachedResponse)
        }
    }

    private func start(task: URLSessionTask, request appRequest: URLRequest, internals: TaskInternals, cachedResponse: CachedURLResponse?,
) {
        self.task = task
        workQueue = internals.workQueue
        guard let agent else { return fail(URLError(.unknown)) }
        var request = appRequest
        switch started.action {
        case .send(let exchange)?:
            if started.changes != nil { request = appRequest.applying(exchange) }
        case .answer(let response)?:
            let url = started.request?.url ?? appRequest.url
            guard let url, let head = response.urlResponse(for: url), let changes = started.changes else { return fail(URLError(.unknown)) }
            return afterLatency {
                self.answerLocally(task: task, request: appRequest, internals: internals, response: head, data: response.body, changes: changes)
            }
        case .fail(let failure)?:
            guard let changes = started.changes else { return fail(URLError(.unknown)) }
            return failByCondition(failure, task: task, request: appRequest, internals: internals, changes: changes)
        case nil:
            break
        }
        original = internals.session
        let consumer = internals.consumer
        delivery = consumer.delivery
        completionTaskDelegate = consumer.completionTaskDelegate as? URLSessionDataDelegate
        uploadDelegate = delivery == .delegateChunks ? task.delegate : consumer.completionTaskDelegate
        let demux = agent.demuxes.demux(for: internals.session)
        // The viewer's control needs the log even with no inspector to see it.
        var decided = started
        let flow = FlowRecording(agent: agent, building: decided.canChange)
        if flow.isBuilt {
            var start = FlowStart(request: request, additionalHeaders: internals.session?.configuration.httpAdditionalHeaders,
                                  sessionID: demux.sessionID, taskID: task.taskIdentifier)
            start.parentID = parentID
            let appBody: Data? = if case .data(let data)? = internals.body { data } else { nil }
            if let origin = agent.rememberForReplay(flow.id, task: task, request: appRequest, body: appBody, session: internals.session) {
                decided.isReplay(of: origin)
            }
            start.changes = decided.changes
            flow.build(start)
        }
        self.flow = flow
        let controlled = ControlledFlow(recording: flow, agent: agent, decided: decided, ends: Self.holdEnds)
        self.controlled = controlled

        if task is URLSessionDownloadTask {
            // corelibs hands a custom protocol's download to the app as a nil
            // file URL (a force-unwrap crash in `download(for:)`): refuse it clearly.
            let error = Self.downloadUnsupportedError(for: request)
            flow.start()
            flow.finish { recorder, _ in recorder.finished(error: error, requestBody: nil) }
            fail(error)
            self.task = nil
            original = nil
            return
        }

        let body = internals.body ?? Self.body(in: request, of: task)
        // A breakpoint's filter (and the held request the viewer shows) sees the body.
        if controlled.intercepts, case .data(let data) = body { flow.update { $0.setRequestBody($0.capped(data)) } }
        if controlled.requestReady() == .hold {
            flow.start()
            heldRequest = HeldRequest(request: request, body: body, internals: internals, cachedResponse: cachedResponse, demux: demux)
            controlled.holdRequest { release in
                self.queue.async { self.endRequestHold(release) }
            }
            return
        }
        launch(request: request, body: body, announce: .first, internals: internals, cachedResponse: cachedResponse, demux: demux)
    }

    /// Whether `flowStarted` goes out as a request is sent: the first time,
    /// again (a person edited the held request), or not (sent when held).
    private enum Announce { case first, again, no }

    /// Sends `request` through the inner session, announcing it first as `announce` says.
    private func launch(request: URLRequest, body: TaskInternals.Body, announce: Announce,
                        internals: TaskInternals, cachedResponse: CachedURLResponse?, demux: Demux) {
        guard let agent, let task, let flow else { return }
        let limit = agent.configuration.bodyCaptureLimit
        let make: (URLSession) -> URLSessionTask
        switch body {
        case .none:
            make = { $0.dataTask(with: request) }
        case .data(let data):
            flow.update { $0.setRequestBody($0.capped(data)) }
            // An upload task's own body wins over `httpBody`, as in corelibs.
            if task is URLSessionUploadTask {
                make = { $0.uploadTask(with: request, from: data) }
            } else {
                make = { $0.dataTask(with: request) }
            }
        case .file(let url):
            flow.update { $0.setRequestBody(BodyCapture.capturing(fileAt: url, limit: limit)) }
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

        countBodyToSend(body)
        paceResponse()
        switch announce {
        case .first: flow.start()
        case .again: flow.restart()
        case .no: break
        }
        // The demux may have been invalidated since it was looked up (the
        // agent stopped); a fresh one serves, else the task fails cleanly.
        guard let inner = demux.task(for: self, cachedResponse: cachedResponse, make)
            ?? agent.demuxes.demux(for: internals.session).task(for: self, cachedResponse: cachedResponse, make)
        else {
            return fail(URLError(.cancelled))
        }
        innerTask = inner
        inner.resume()
        if case .none = body { flow.update { $0.markRequestSent() } }
    }

    // MARK: - Breakpoints (on `queue`)

    /// How a held flow ends when stopped: as corelibs ends a cancelled task.
    static let holdEnds = ControlledFlow.HoldEnds(killed: .thrown(URLError(.cancelled)), cancelled: .thrown(URLError(.cancelled)))

    /// The viewer (or a timeout, or the app) decided about a held request;
    /// the flow recorded an edit.
    private func endRequestHold(_ release: ExchangeControl.RequestRelease) {
        guard let held = heldRequest else { return }
        heldRequest = nil
        switch release {
        case .kill:
            return endHeld(cancellingTask: true)
        case .cancelled:
            return endHeld(cancellingTask: false)
        case .send(let exchange, let edited):
            // The app cancelled the task while it was held; corelibs reports that.
            guard !clientIsDone else { return endHeld(cancellingTask: false) }
            var request = held.request
            var body = held.body
            if edited {
                request = held.request.applying(exchange)
                if !exchange.bodyStreams { body = exchange.body.map { .data($0) } ?? .none }
            }
            launch(request: request, body: body, announce: edited ? .again : .no, internals: held.internals,
                   cachedResponse: held.cachedResponse, demux: held.demux)
        }
    }

    /// Ends a held flow as cancelled, without (more) network. A kill
    /// (`cancellingTask`) cancels the app's task, so the app sees exactly
    /// what a cancellation shows, `task.error` included: corelibs sets that
    /// on `cancel()`, never from a custom protocol's failure.
    func endHeld(cancellingTask: Bool) {
        let streamed = requestStream.current?.captured
        flow?.finish { recorder, _ in recorder.finished(error: URLError(.cancelled), requestBody: streamed) }
        let appTask = task
        letGoOfTask()
        if cancellingTask { appTask?.cancel() }
    }

    /// The exchange is over for the app's task: drop what ties the flow to
    /// it and its session (the client is still called through `owner`).
    func letGoOfTask() {
        original = nil
        task = nil
        completionTaskDelegate = nil
        uploadDelegate = nil
        streamSource.withLock { $0 = nil }
    }

    /// What to send when the task's internal body could not be read.
    static func body(in request: URLRequest, of task: URLSessionTask) -> TaskInternals.Body {
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

    func fail(_ error: Error) {
        withClient(finishing: true) { client, owner in client.urlProtocol(owner, didFailWithError: error) }
    }
}
