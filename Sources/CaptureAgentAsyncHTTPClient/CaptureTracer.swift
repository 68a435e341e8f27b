// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import CaptureAgent
import Foundation
import NIOConcurrencyHelpers
import Tracing
import WireProtocol

/// The tracer ``CaptureAgent/capture(_:)`` puts in an `HTTPClient.Configuration`.
///
/// It forwards everything to the tracer the configuration had (spans,
/// context injection and extraction), so the app's tracing works as before;
/// with the default no-op tracer nothing is injected into requests either.
///
/// AsyncHTTPClient 1.37.0 starts one span around each async
/// `execute(_:deadline:)` (HTTPClient+tracing.swift), from before a
/// connection is looked for until the final response head, redirects
/// included, and records the error that ends it. That is how the capture
/// learns of requests that never reach a connection. The future-based API's
/// spans (RequestBag+Tracing.swift) start only once a connection is
/// assigned, and the channel handlers see everything from there, so those
/// are only forwarded.
struct CaptureTracer: Tracer {
    typealias Span = CaptureSpan

    let inner: (any Tracer)?
    let client: ClientCapture
    /// Whether the app has no tracer (none, or the no-op one): its spans
    /// keep no attributes, so the capture may keep them instead.
    let innerKeepsNothing: Bool

    init(wrapping inner: (any Tracer)?, client: ClientCapture) {
        self.inner = inner
        self.client = client
        innerKeepsNothing = inner == nil || inner is NoOpTracer
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> CaptureSpan {
        func start(_ tracer: some Tracer) -> any Tracing.Span {
            tracer.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
        }
        let span: any Tracing.Span = inner.map { start($0) } ?? NoOpTracer.NoOpSpan(context: context())
        // Watched only while flows are recorded: the request is paired with
        // the connection that carries it for what only a built flow shows
        // (its parent, its wait for a connection, an error that never
        // reached one). Unwatched, the span costs the app what the app's own
        // span costs (docs/BENCHMARKS.md), and a request that fails before
        // any connection goes uncounted (CaptureAgent.Statistics.droppedEvents).
        let watched = kind == .client && fileID != "AsyncHTTPClient/RequestBag+Tracing.swift" && client.agent.isRecording
        // The async API starts this span on the caller's task, with its
        // context: a captured handler's inbound flow is the request's parent.
        // AsyncHTTPClient names the span after the request's method (HTTPClient+tracing.swift).
        let request = watched ? TracedRequest(client: client, method: operationName, parentID: context().inboundFlowID) : nil
        return CaptureSpan(inner: span, request: request, keepsAttributes: innerKeepsNothing)
    }

    /// Nothing to flush here: AsyncHTTPClient never flushes its tracer, and
    /// the app flushes its own tracer, not this wrapper.
    func forceFlush() {}

    func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Carrier == Inject.Carrier {
        inner?.inject(context, into: &carrier, using: injector)
    }

    func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Carrier == Extract.Carrier {
        inner?.extract(carrier, into: &context, using: extractor)
    }
}

/// A span of the app's tracer, watched: the request's URL from the
/// attributes AsyncHTTPClient sets, its error, its end.
///
/// AsyncHTTPClient sets nine attributes a request, each as
/// `span.attributes[key] = value`: a read, an insert, a write. A no-op
/// span reads back empty, so every insert made a dictionary and every
/// write freed it, nine times a request
/// (docs/BENCHMARKS.md, "Costs behind the code"). When the app has no
/// tracer, the watched request keeps the attributes instead and lends its
/// dictionary to each read, so the inserts go into one table. A read with
/// no write after it keeps the table, and the next read is empty: never
/// less than the no-op span, which always reads empty.
struct CaptureSpan: Tracing.Span {
    let inner: any Tracing.Span
    let request: TracedRequest?
    /// The request, when it keeps the attributes (the app's span would drop them).
    private let keeper: TracedRequest?

    init(inner: any Tracing.Span, request: TracedRequest?, keepsAttributes: Bool) {
        self.inner = inner
        self.request = request
        keeper = keepsAttributes ? request : nil
    }

    var context: ServiceContext { inner.context }

    var operationName: String {
        get { inner.operationName }
        nonmutating set { inner.operationName = newValue }
    }

    var attributes: SpanAttributes {
        get { keeper?.lendAttributes() ?? inner.attributes }
        nonmutating set {
            if let keeper {
                keeper.update(from: newValue)
                keeper.keep(newValue)
            } else {
                inner.attributes = newValue
                request?.update(from: newValue)
            }
        }
    }

    var isRecording: Bool { inner.isRecording }

    func setStatus(_ status: SpanStatus) { inner.setStatus(status) }
    func addEvent(_ event: SpanEvent) { inner.addEvent(event) }
    func addLink(_ link: SpanLink) { inner.addLink(link) }

    func recordError<Instant: TracerInstant>(_ error: Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        request?.failed(error)
        inner.recordError(error, attributes: attributes, at: instant())
    }

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        inner.end(at: instant())
        request?.end()
    }
}

/// One async request as the tracer sees it, from before it has a connection
/// until its final response head or its error.
///
/// Announced to the client under its URL's ``Key`` once AsyncHTTPClient has
/// set the URL attribute; a connection that sends that request claims it (so
/// its error reaches the wire flow), and a redirect announces it again for
/// the next hop. If it ends with an error while waiting for a connection, no
/// connection ever carried it: it is logged as a failed flow of its own.
final class TracedRequest: @unchecked Sendable {
    private let client: ClientCapture
    private let lock = NIOLock()
    // Behind `lock`.
    private var method: String
    /// When the current hop started waiting for a connection.
    private var start: FlowClock.Start?
    /// The current hop's absolute URL, as AsyncHTTPClient reports it
    /// (credentials stripped), or as a redirect resolved it.
    private var url: String?
    private var key: String?
    private var waitingForConnection = false
    private var error: Error?
    private var ended = false
    private var waiters: [@Sendable (Error?) -> Void] = []
    /// Whether the URL attribute was seen; touched only by
    /// ``update(from:)``, which the request's own task calls, one attribute
    /// at a time.
    private var sawURL = false
    /// The span's attributes, when the app's span keeps none
    /// (``CaptureSpan``); behind `lock`. Out on loan between a read of the
    /// span's attributes and the write that follows it, so that the insert
    /// in between finds the table uniquely referenced.
    private var attributes = SpanAttributes(Dictionary(minimumCapacity: 12))

    /// The inbound flow the app was handling when it made the request.
    let parentID: FlowID?

    init(client: ClientCapture, method: String, parentID: FlowID?) {
        self.client = client
        self.method = method
        self.parentID = parentID
    }

    /// Hands the kept attributes to a read of the span's attributes,
    /// keeping none meanwhile (see ``attributes``).
    func lendAttributes() -> SpanAttributes {
        lock.withLock {
            defer { attributes = SpanAttributes([:]) }
            return attributes
        }
    }

    /// Takes back the attributes lent by ``lendAttributes()``, as the write
    /// of the span's attributes left them.
    func keep(_ attributes: SpanAttributes) {
        lock.withLock { self.attributes = attributes }
    }

    /// AsyncHTTPClient sets one attribute at a time (a no-op tracer's span
    /// reads back only that one; another tracer's, and ours when we keep
    /// them, read back all set so far), method first, full URL seventh.
    /// Once the URL is seen nothing here changes, so later writes cost one
    /// test; before it, one lookup a write. The method is the span's name,
    /// not looked up. The URL is read as text (``Key/of(urlText:)``), not
    /// parsed. (Reading it once instead, when AsyncHTTPClient injects the
    /// span's context, cost as much: the context has to carry the request
    /// there, and a `ServiceContext` value costs an insert and a dynamic
    /// cast; docs/BENCHMARKS.md.)
    func update(from attributes: SpanAttributes) {
        guard !sawURL else { return }
        guard case .string(let text)? = attributes.get("url.full") else { return }
        sawURL = true
        guard let key = Key.of(urlText: text) else { return }
        let start = client.agent.clock.start()
        let fresh = lock.withLock { () -> Bool in
            guard self.url == nil, !ended else { return false }
            self.url = text
            self.key = key
            self.start = start
            waitingForConnection = true
            return true
        }
        if fresh { client.announce(self, key: key) }
    }

    /// The flow of a request that never reached a connection.
    private func flowStart(taskID: Int, method: String, url: String, start: FlowClock.Start?) -> FlowStart {
        var flowStart = FlowStart(method: method, url: url, headers: [], sessionID: client.clientID, taskID: taskID)
        flowStart.startedAt = start
        flowStart.source = CaptureSource(client: .asyncHTTPClient, path: .tracer)
        flowStart.parentID = parentID
        return flowStart
    }

    var isOpen: Bool { lock.withLock { !ended } }

    /// When the current hop started waiting for a connection.
    var waitStart: FlowClock.Start? { lock.withLock { start } }

    /// A connection is sending this request (or its current hop).
    func carried(by flow: WireFlow) {
        lock.withLock { waitingForConnection = false }
    }

    /// The hop just answered with a redirect AsyncHTTPClient will follow to `target`.
    func redirected(to target: URL, status: Int, method: String) {
        let next = status == 303 && method != "HEAD" || (status == 301 || status == 302) && method == "POST" ? "GET" : method
        let start = client.agent.clock.start()
        let text = target.absoluteString
        let key = Key.of(target)
        lock.withLock {
            self.url = text
            self.key = key
            self.method = next
            self.start = start
            waitingForConnection = true
        }
    }

    func failed(_ error: Error) {
        lock.withLock { if self.error == nil { self.error = error } }
    }

    /// Calls `body` with the request's error (nil: it succeeded) once it ends.
    func whenEnded(_ body: @escaping @Sendable (Error?) -> Void) {
        let now = lock.withLock { () -> Bool in
            if ended { return true }
            waiters.append(body)
            return false
        }
        if now { body(lock.withLock { error }) }
    }

    func end() {
        let (waiters, error, unsent, key, url, method, start) = lock.withLock {
            () -> ([@Sendable (Error?) -> Void], Error?, Bool, String?, String?, String, FlowClock.Start?) in
            guard !ended else { return ([], nil, false, nil, nil, "", nil) }
            ended = true
            defer { self.waiters = [] }
            return (self.waiters, self.error, waitingForConnection, self.key, self.url, self.method, self.start)
        }
        // Only a request waiting for a connection is still announced (a
        // connection's claim took it out of the table).
        if unsent, let key { client.withdraw(self, key: key) }
        if let error, unsent, let url, let parsed = URL(string: url), client.shouldCapture(parsed) {
            // Never reached a connection: refused, DNS, connect or pool timeout, cancelled while waiting.
            var flowStart = flowStart(taskID: client.nextTaskID(), method: method, url: url, start: start)
            flowStart.hops = key.flatMap { client.claimRedirect(key: $0) }
            FlowRecording(agent: client.agent, start: flowStart, configuration: client.configuration).finish(.thrownByAsyncHTTPClient(error))
        }
        for waiter in waiters { waiter(error) }
    }
}
#endif
