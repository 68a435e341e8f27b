import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

// The in-place path: the capture protocol creates the protocol class that
// would have run the task without the agent (corelibs' own HTTP protocol,
// or an app's protocol listed after the capture class), bound to the app's
// own task, with a client that records every call and forwards it. corelibs
// then runs the task as it would without the agent: downloads, byte
// counters, progress, redirects, cookies, cache, authentication,
// `task.error`, `currentRequest`.

/// The client given to the next protocol: records each call, then forwards
/// it, unchanged and on the same thread, to the capture protocol's own
/// client (corelibs' `_ProtocolClient`). The next protocol passes itself as
/// the protocol, so corelibs reads the results (body, download file) from
/// it, exactly as without the agent.
final class RecordingClient: NSObject, URLProtocolClient, @unchecked Sendable {
    private let real: URLProtocolClient
    let flow: InPlaceFlow

    init(forwardingTo real: URLProtocolClient, flow: InPlaceFlow) {
        self.real = real
        self.flow = flow
    }

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        real.urlProtocol(`protocol`, wasRedirectedTo: request, redirectResponse: redirectResponse)
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        real.urlProtocol(`protocol`, cachedResponseIsValid: cachedResponse)
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        flow.received(response)
        real.urlProtocol(`protocol`, didReceive: response, cacheStoragePolicy: policy)
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {
        flow.loaded(data)
        real.urlProtocol(`protocol`, didLoad: data)
    }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) {
        // Before forwarding: the app's callback may move the download's file.
        flow.finish(native: `protocol`, error: nil)
        real.urlProtocolDidFinishLoading(`protocol`)
    }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: Error) {
        flow.finish(native: `protocol`, error: error)
        real.urlProtocol(`protocol`, didFailWithError: error)
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        real.urlProtocol(`protocol`, didReceive: challenge)
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {
        real.urlProtocol(`protocol`, didCancel: challenge)
    }
}

/// One exchange captured in place. Calls come from the task's work queue
/// (through ``RecordingClient`` and the capture protocol); what must be read
/// there is read there (the task's response, the download's file, libcurl's
/// figures), and everything else (building and redacting the log, reading
/// bodies) happens on the flow's own queue, in order.
final class InPlaceFlow: @unchecked Sendable {
    private let agent: CaptureAgent
    private let queue: DispatchQueue
    /// The flow's events. A flow that is not built (no inspector was
    /// connected when the task started) reads nothing and only counts them.
    private let flow: FlowRecording
    private let start: FlowClock.Start
    private weak var task: URLSessionTask?
    /// Set once, synchronously, by whichever end comes first.
    private let done = Locked(false)
    /// The native protocol's easy handle, when there is one; read on the work queue only.
    private var easyHandle: UnsafeMutableRawPointer?
    private var watchingHeaders = false
    /// Touched only on `queue`.
    private var responseBody: Data?
    private var sawResponse = false
    /// Read on the work queue only: what a retry needs.
    private let internals: TaskInternals
    private var finishedStatus: Int?
    private var watchesRetries = false
    /// The app's own protocol this flow observes, while it runs.
    private var observedProtocol: ObjectIdentifier?

    /// The inbound flow the app was handling when it made the request.
    private let parentID: FlowID?

    /// Call on the task's work queue, before the next protocol starts.
    init(agent: CaptureAgent, task: URLSessionTask, request: URLRequest, internals: TaskInternals, parentID: FlowID? = nil) {
        self.agent = agent
        self.parentID = parentID
        self.task = task
        self.internals = internals
        start = agent.clock.start()
        let flow = FlowRecording(agent: agent)
        self.flow = flow
        queue = flow.isBuilt ? DispatchQueue(label: "netinspect.CaptureAgent.inPlace") : Self.idleQueue
        guard flow.isBuilt else {
            flow.start()
            return
        }
        let taskID = task.taskIdentifier
        let originalRequest = request
        queue.async { [start] in
            let session = internals.session
            var flowStart = FlowStart(request: originalRequest, additionalHeaders: session?.configuration.httpAdditionalHeaders,
                                      sessionID: agent.demuxes.sessionID(for: session), taskID: taskID, path: .inPlace)
            flowStart.startedAt = start
            flowStart.parentID = parentID
            let body: Data? = if case .data(let data)? = internals.body { data } else { nil }
            flowStart.changes = agent.rememberForReplay(flow.id, task: task, request: originalRequest, body: body, session: session)?.changes
            flow.build(flowStart)
            flow.update { $0.setRequestBody(Self.requestBody(internals.body, of: $0)) }
            flow.start()
        }
    }

    /// Stands in for the queue of a flow that records nothing (never used).
    private static let idleQueue = DispatchQueue(label: "netinspect.CaptureAgent.inPlace.idle")

    private static func requestBody(_ body: TaskInternals.Body?, of recorder: FlowRecorder) -> CapturedBody? {
        switch body {
        case .data(let data)?: recorder.capped(data)
        case .file(let url)?: BodyCapture.capturing(fileAt: url, limit: recorder.configuration.bodyCaptureLimit)
        case .none?, .stream?, .askDelegate?, nil: nil
        }
    }

    /// Before the next protocol's `startLoading()`: record the header
    /// blocks its easy handle writes and reads, transfer by transfer.
    func starting(native: URLProtocol) {
        if !NativeProtocolFields.shared.isNative(native), observedProtocol == nil {
            observedProtocol = ObjectIdentifier(native)
            ObservedProtocols.insert(native)
        }
        guard flow.isBuilt, !done.current, easyHandle == nil, let handle = NativeProtocolFields.shared.easyHandle(of: native) else { return }
        easyHandle = handle
        watchingHeaders = Libcurl.watchHeaders(of: handle)
    }

    func received(_ response: URLResponse) {
        // An unbuilt flow only counts the head (`make` is not called).
        guard flow.isBuilt else {
            flow.respond(replacing: true) { $0.received(response, at: nil) }
            return
        }
        let now = agent.clock.offset(since: start)
        queue.async {
            self.flow.respond(replacing: true) { recorder in
                self.sawResponse = true
                return recorder.received(response, at: now)
            }
        }
    }

    /// `didLoad` replaces what the client stores: keep the last one.
    func loaded(_ data: Data) {
        guard flow.isBuilt else { return }
        queue.async { self.responseBody = data }
    }

    /// From `stopLoading()` when the task is being cancelled (corelibs then
    /// reports the cancellation to the client itself, not through ours).
    func cancelled(native: URLProtocol?) {
        let partial = native.map(NativeProtocolFields.shared.partialTransfer(of:)) ?? (nil, nil)
        finish(native: native, error: task?.error ?? URLError(.cancelled), partial: partial)
    }

    /// The task ended: reads what only the work queue may read, then logs.
    func finish(native: URLProtocol?, error: Error?, partial: (response: URLResponse?, body: Data?) = (nil, nil)) {
        let first = done.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        if let observedProtocol { ObservedProtocols.remove(observedProtocol) }
        let task = self.task
        let response = task?.response ?? partial.response
        finishedStatus = (response as? HTTPURLResponse)?.statusCode
        // An unbuilt flow counts its events (`make` is not called).
        guard flow.isBuilt else {
            flow.finish { recorder, _ in recorder.finished(error: error, requestBody: nil) }
            return
        }
        let finishedAt = agent.clock.offset(since: start)
        let originalURL = task?.originalRequest?.url
        let finalURL = task?.currentRequest?.url
        // Opened now, read later: the app may move the file once told.
        let file: FileHandle? = error == nil && task is URLSessionDownloadTask
            ? native.flatMap(NativeProtocolFields.shared.temporaryFileURL(of:)).flatMap { try? FileHandle(forReadingFrom: $0) }
            : nil
        let times = easyHandle.map(Libcurl.times(of:)) ?? Libcurl.Times()
        let localAddress = easyHandle.flatMap(Libcurl.localAddress(of:))
        let seen = watchingHeaders ? easyHandle.flatMap(Libcurl.stopWatching) : nil
        let limit = agent.configuration.bodyCaptureLimit
        agent.finishing.enter()
        queue.async {
            defer { self.agent.finishing.leave() }
            defer { try? file?.close() }
            self.flow.finish { recorder, _ in
                if let response, !self.sawResponse { _ = recorder.received(response, at: nil) }
                if let file {
                    recorder.setResponseBody(BodyCapture.capturing(file, limit: limit))
                } else if let body = self.responseBody ?? partial.body {
                    recorder.setResponseBody(recorder.capped(body))
                }
                recorder.setTransfer(times: times, endingAt: finishedAt, observedHead: self.sawResponse)
                recorder.connected(from: localAddress)
                if let originalURL, let finalURL {
                    recorder.setRedirects(Self.hops(from: originalURL, to: finalURL, exchanges: seen?.exchanges ?? []))
                }
                if let block = seen?.exchanges.first?.headerOut, !block.isEmpty { recorder.setSentHeaders(block) }
                return recorder.finished(error: error, requestBody: nil, at: finishedAt)
            }
            self.responseBody = nil
        }
    }

    /// From `stopLoading()` when the task is being suspended. After a 401,
    /// that is corelibs answering the challenge: it suspends the task, puts
    /// a fresh HTTP protocol (with a client of its own) in place of the
    /// capture protocol and resumes, so the retry would escape capture. The
    /// watch finds that protocol and gives it a recording client too.
    func suspended() {
        guard done.current, finishedStatus == 401, !watchesRetries, let task, let workQueue = internals.workQueue else { return }
        watchesRetries = true
        let watch = RetryWatch(agent: agent, task: task, internals: internals, workQueue: workQueue)
        // corelibs suspends the task, then (on the delegate queue, without
        // the work queue) puts the retry's protocol in place and resumes,
        // which waits for this queue: so wait here, briefly, for the slot to
        // change, and the retry starts with a recording client.
        watch.catchUp(within: .milliseconds(50))
        watch.poll()
    }

    /// The redirect hops of a task that started at `originalURL` and ended
    /// at `finalURL`: from each exchange libcurl wrote and read on the
    /// handle (a 3xx with `Location`, followed by another request), or, when
    /// they were not seen, one hop from the original to the final URL whose
    /// status the agent does not know (`statusCode` 0).
    static func hops(from originalURL: URL, to finalURL: URL, exchanges: [Libcurl.Exchange]) -> [(status: Int, from: URL, to: URL)] {
        var hops: [(status: Int, from: URL, to: URL)] = []
        var current = originalURL
        for exchange in exchanges.dropLast() {
            let head = HeaderBlock(exchange.headerIn)
            guard let status = head.status, (300 ... 399).contains(status), let location = head.value(of: "Location"),
                  let target = URL(string: location, relativeTo: current)?.absoluteURL
            else { break }
            hops.append((status, current, target))
            current = target
        }
        if current.absoluteString != finalURL.absoluteString { hops.append((0, current, finalURL)) }
        return hops
    }
}

/// Finds the protocols corelibs creates for a task's retries after answered
/// challenges (``InPlaceFlow/suspended()``) and records each retry as a flow
/// of its own (the server sees two exchanges). Polls the task's protocol
/// slot on the task's work queue, where the client is also called, starting
/// every millisecond and backing off to 50 ms, until the task completes.
final class RetryWatch: @unchecked Sendable {
    private let agent: CaptureAgent
    private let task: URLSessionTask
    private let internals: TaskInternals
    private let workQueue: DispatchQueue
    // Touched only on `workQueue`.
    private var known: Set<ObjectIdentifier> = []
    private var delay = 0.001
    private let deadline = DispatchTime.now() + .seconds(300)

    init(agent: CaptureAgent, task: URLSessionTask, internals: TaskInternals, workQueue: DispatchQueue) {
        self.agent = agent
        self.task = task
        self.internals = internals
        self.workQueue = workQueue
    }

    /// Call on the work queue: waits at most `timeout` for a retry's
    /// protocol to appear and records it.
    func catchUp(within timeout: DispatchTimeInterval) {
        let until = DispatchTime.now() + timeout
        while DispatchTime.now() < until {
            if adoptRetry() { return }
            usleep(100)
        }
    }

    /// Call on the work queue.
    func poll() {
        let state = task.state
        guard state == .running || state == .suspended, DispatchTime.now() < deadline else { return }
        if adoptRetry() { delay = 0.001 }
        workQueue.asyncAfter(deadline: .now() + delay) { self.poll() }
        delay = min(delay * 2, 0.05)
    }

    /// Gives the task's current protocol a recording client when it is a
    /// retry's protocol not seen before.
    private func adoptRetry() -> Bool {
        guard let current = TaskInternals.currentProtocol(of: task), !(current is CaptureURLProtocol),
              !known.contains(ObjectIdentifier(current)), !(current.client is RecordingClient),
              NativeProtocolFields.shared.isNative(current), let client = current.client
        else { return false }
        known.insert(ObjectIdentifier(current))
        let request = TaskInternals.authRequest(of: task) ?? task.originalRequest ?? current.request
        let flow = InPlaceFlow(agent: agent, task: task, request: request, internals: internals)
        current.client = RecordingClient(forwardingTo: client, flow: flow)
        agent.count(.inPlace)
        flow.starting(native: current)
        return true
    }
}
