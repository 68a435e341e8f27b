import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// Builds the log of one captured exchange and the events that carry it:
/// `flowStarted`, `flowResponse`, `flowFinished`. Redaction happens here,
/// so only the log ever sees redacted values.
///
/// Shared (package visibility) by every capture path: the URLSession
/// protocol and the AsyncHTTPClient and OpenAPI products, which describe
/// their exchanges with plain values instead of Foundation's types.
package struct FlowRecorder {
    package let id: FlowID
    private let sessionID: Int
    private let taskID: Int
    let configuration: CaptureAgent.Configuration
    private let clock: FlowClock
    private let start: FlowClock.Start
    private(set) var request: Request
    private(set) var requestSent: Double?
    private(set) var firstResponseByte: Double?
    private var redirects: [RedirectHop] = []
    /// The response head, once recorded (its body is ``responseBody``'s).
    private(set) var response: Response? {
        didSet { responseFraming = response.map { ResponseFraming($0.headers) } }
    }
    /// What the response head says of its body, read once per head: every
    /// piece of a streamed body asks (``bodyPart(_:bytes:offset:)``).
    private(set) var responseFraming: ResponseFraming?
    /// The response body as its bytes went by (``FlowRecorder+BodyParts`` reads its size).
    private(set) var responseBody: BodyCapture
    private var capturedResponseBody: CapturedBody?
    private(set) var sentHeaderBlock: String?
    private(set) var transferTimes = Libcurl.Times()
    /// Which client captured the flow, and how; sent with `flowStarted`.
    package var source: CaptureSource?
    /// Set by inbound adapters: the app received this request.
    package var direction: FlowDirection?
    /// The inbound flow whose handler made this request, when there is one.
    package var parentID: FlowID?
    /// The other end's address, when the adapter sees it (inbound: the client).
    package var peer: String?
    /// This end's address of the connection, when the adapter sees it
    /// (outbound: what a captured callee has as its peer); sent with
    /// `flowStarted`, or with `flowFinished` when learnt after the start
    /// (``connected(from:)``).
    package var localAddress: String?
    private var localAddressAfterStart = false
    /// Set by the gRPC adapter: which RPC this flow is (service, method,
    /// kind), sent with `flowStarted`; its messages and status travel as
    /// their own events.
    package var grpc: GRPCCall?
    /// Set by a WebSocket adapter: an empty session, sent with
    /// `flowStarted` so a viewer knows the flow for a WebSocket connection;
    /// its messages travel as their own events.
    package var webSocket: WebSocketSession?
    /// For a client that reports no phases itself: the name the phases the
    /// recorder measures are given (nil: none are measured; URLSession flows
    /// take libcurl's). See ``measurePhases(source:blocked:)``.
    private(set) var measuredPhasesSource: String?
    private(set) var blockedBeforeStart: Double?
    /// Whether the response body bytes are after the client removed a
    /// content coding; nil: as libcurl does, whenever `Content-Encoding`
    /// names one (what URLSession flows start with; the other clients say).
    package var responseBodyIsDecoded: Bool? = false

    /// A flow for a request described by plain values (``FlowStart``
    /// describes it for the adapters); `headers` as the app set them, in
    /// order. The URL (parsed only when it has a query or credentials to
    /// redact) and the headers are redacted here.
    package init(
        id: FlowID = FlowID(),
        method: String,
        url: String,
        headers: [HTTPHeader],
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock,
        start: FlowClock.Start? = nil
    ) {
        self.init(id: id, method: method, redactedURL: configuration.redacting(urlText: url), headers: headers,
                  sessionID: sessionID, taskID: taskID, configuration: configuration, clock: clock, start: start)
    }

    /// The same, for a URL redacted already (URLSession's, from a `URL`).
    init(
        id: FlowID,
        method: String,
        redactedURL: String,
        headers: [HTTPHeader],
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock,
        start: FlowClock.Start?
    ) {
        self.id = id
        self.sessionID = sessionID
        self.taskID = taskID
        self.configuration = configuration
        self.clock = clock
        self.start = start ?? clock.start()
        self.responseBody = BodyCapture(limit: configuration.bodyCaptureLimit)
        self.request = Request(method: method, url: redactedURL, headers: configuration.redacting(headers))
    }

    /// What traffic rules changed, redacted like the rest of the request.
    package private(set) var changes: FlowChanges?

    /// Set when the changes were updated after `flowStarted` went out: then
    /// `flowFinished` carries them.
    private var changedAfterStart = false

    /// Records what changed the flow; `afterStart`: the change came once
    /// `flowStarted` had gone out (a response edited at a breakpoint).
    package mutating func setChanges(_ changes: FlowChanges, afterStart: Bool = false) {
        if afterStart { changedAfterStart = true }
        var redacted = changes
        redacted.originalURL = changes.originalURL.flatMap(URL.init(string:)).map(configuration.redacting) ?? changes.originalURL
        redacted.originalHeaders = changes.originalHeaders.map(configuration.redacting)
        self.changes = redacted
    }

    /// Header fields the client added on the way to the wire (redacted
    /// here); set before ``started()``.
    package mutating func setClientHeaders(_ headers: [HTTPHeader]) {
        request.clientHeaders = configuration.redacting(headers)
    }

    /// `data` as the log keeps a body: up to the capture limit, with its
    /// full size. Every adapter caps bodies here.
    package func capped(_ data: Data) -> CapturedBody {
        CapturedBody(capturing: data, cap: configuration.bodyCaptureLimit)
    }

    /// A body known before sending (data, file prefix) goes in `flowStarted`.
    package mutating func setRequestBody(_ body: CapturedBody?) {
        request.body = body
    }

    private var timing: Timing {
        Timing(startedAt: start.date, requestSent: requestSent, firstResponseByte: firstResponseByte)
    }

    /// The flow as it stands: the request, and the response with the body
    /// so far (what a breakpoint's filter sees, and what a held response shows).
    package var log: NetworkLog {
        NetworkLog(id: id, sessionID: sessionID, taskID: taskID, request: request, response: currentResponse, timing: timing,
                   redirects: redirects, source: source, changes: changes, direction: direction, parentID: parentID, peer: peer,
                   localAddress: localAddress, grpc: grpc, webSocket: webSocket)
    }

    /// The response head with the body captured so far.
    package var currentResponse: Response? {
        guard var response else { return nil }
        response.body = responseBody.captured
        return response
    }

    /// A person edited the request at a breakpoint: the log shows what is
    /// sent instead (redacted), with the same flow id; the body is the
    /// request's data, or the one recorded before when `keepingBody`.
    mutating func replaceRequest(_ urlRequest: URLRequest, additionalHeaders: [AnyHashable: Any]?, keepingBody: Bool) {
        let body = keepingBody ? request.body : nil
        request = Request(
            method: urlRequest.httpMethod ?? "GET",
            url: urlRequest.url.map(configuration.redacting) ?? "",
            headers: configuration.redacting(Self.requestHeaders(urlRequest.allHTTPHeaderFields ?? [:], additional: additionalHeaders)),
            body: keepingBody ? body : urlRequest.httpBody.map(capped)
        )
    }

    /// The same, for a request described by plain values (redacted here).
    package mutating func replaceRequest(method: String, url: URL?, headers: [HTTPHeader], body: CapturedBody?) {
        request = Request(method: method, url: url.map(configuration.redacting) ?? "", headers: configuration.redacting(headers), body: body)
    }

    /// A person edited the response at a breakpoint: the log shows what the
    /// app got instead.
    mutating func replaceResponse(_ urlResponse: HTTPURLResponse, body: Data) {
        _ = record(urlResponse)
        responseBody.append(body)
    }

    /// The same, for a response described by plain values.
    package mutating func replaceResponse(statusCode: Int, headers: [HTTPHeader], mimeType: String?, body: Data) {
        _ = record(statusCode: statusCode, headers: headers, mimeType: mimeType)
        body.withUnsafeBytes { responseBody.append($0) }
    }

    /// The transfer's connection, known after `flowStarted` went out, was
    /// bound to `address`: `flowFinished` carries it.
    package mutating func connected(from address: String?) {
        guard let address else { return }
        localAddress = address
        localAddressAfterStart = true
    }

    package func started() -> Message {
        .flowStarted(NetworkLog(id: id, sessionID: sessionID, taskID: taskID, request: request, timing: timing, source: source,
                                changes: changes, direction: direction, parentID: parentID, peer: peer,
                                localAddress: localAddress, grpc: grpc, webSocket: webSocket))
    }

    /// Makes the final timing carry phases the recorder measured itself:
    /// `send` from the start to the request's end, `wait` to the response
    /// head, `receive` to the end; `blocked`, when given, is the time before
    /// the start spent waiting for a connection (seconds).
    package mutating func measurePhases(source: String, blocked: Double?) {
        measuredPhasesSource = source
        blockedBeforeStart = blocked
    }

    /// Seconds since the flow started, on the agent's clock: when a gRPC
    /// message went by.
    package var elapsed: Double { clock.offset(since: start) }

    /// The request (with its body) has gone out; later calls move the mark.
    package mutating func markRequestSent() {
        requestSent = clock.offset(since: start)
    }

    mutating func redirected(_ response: HTTPURLResponse, to newRequest: URLRequest) {
        redirected(statusCode: response.statusCode, from: response.url, to: newRequest.url)
    }

    /// Records one redirect hop (redacted like the request URL).
    package mutating func redirected(statusCode: Int, from: URL?, to: URL?) {
        redirects.append(RedirectHop(
            statusCode: statusCode,
            from: from.map(configuration.redacting) ?? "",
            to: to.map(configuration.redacting) ?? ""
        ))
    }

    /// The request method, as logged.
    package var method: String { request.method }

    /// The hops recorded so far, already redacted; a client that sends each
    /// hop as a new request hands them on with ``continuing(after:)``.
    package var redirectHops: [RedirectHop] { redirects }

    /// Starts this flow with the hops of the requests that led to it.
    package mutating func continuing(after hops: [RedirectHop]) {
        redirects = hops
    }

    /// The response head; `offset` is when it arrived (nil: not observed,
    /// only known at the end; the transfer's figures may tell later).
    mutating func received(_ urlResponse: URLResponse, at offset: Double?) -> Message {
        if let offset {
            if requestSent == nil { requestSent = offset }
            firstResponseByte = offset
        }
        return record(urlResponse)
    }

    mutating func received(_ urlResponse: URLResponse) -> Message {
        received(urlResponse, at: clock.offset(since: start))
    }

    private mutating func record(_ urlResponse: URLResponse) -> Message {
        let http = urlResponse as? HTTPURLResponse
        let fields = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { result, field in
            // Cast first: interpolating an `Any` asks the runtime which of
            // several protocols it conforms to, for every header.
            guard let name = field.key.base as? String else { return }
            result[name] = field.value as? String ?? "\(field.value)"
        }
        return record(statusCode: http?.statusCode ?? 0, headers: Self.sortedHeaders(fields), mimeType: urlResponse.mimeType)
    }

    /// The response head has arrived; `headers` as received, in order.
    package mutating func received(statusCode: Int, headers: [HTTPHeader], mimeType: String?) -> Message {
        let now = clock.offset(since: start)
        if requestSent == nil { requestSent = now }
        firstResponseByte = now
        return record(statusCode: statusCode, headers: headers, mimeType: mimeType)
    }

    private mutating func record(statusCode: Int, headers: [HTTPHeader], mimeType: String?) -> Message {
        let response = Response(statusCode: statusCode, headers: configuration.redacting(headers), mimeType: mimeType)
        self.response = response
        responseBody = BodyCapture(limit: configuration.bodyCaptureLimit)
        return .flowResponse(FlowResponse(id: id, response: response, timing: timing, redirects: redirects))
    }

    mutating func receivedBody(_ data: Data) {
        responseBody.append(data)
    }

    /// Response body bytes, counted in full and kept up to the capture limit.
    package mutating func receivedBody(_ bytes: UnsafeRawBufferPointer) {
        responseBody.append(bytes)
    }

    /// The whole response body at once (the in-place path), replacing any.
    mutating func setResponseBody(_ body: CapturedBody?) {
        capturedResponseBody = body
    }

    /// The request header block libcurl wrote, kept for the log.
    mutating func setSentHeaders(_ block: String) {
        sentHeaderBlock = block
    }

    mutating func setRedirects(_ hops: [(status: Int, from: URL, to: URL)]) {
        redirects = hops.map {
            RedirectHop(statusCode: $0.status, from: configuration.redacting($0.from), to: configuration.redacting($0.to))
        }
    }

    /// libcurl's figures for the last transfer (seconds from its start),
    /// which ended at `end` (seconds from the flow's start): they place the
    /// request's end and the response's first byte when the agent did not
    /// see them itself (`observedHead`).
    mutating func setTransfer(times: Libcurl.Times, endingAt end: Double, observedHead: Bool) {
        guard let total = times[.total], total > 0 else { return }
        transferTimes = times
        let origin = max(0, end - total)
        if let sent = times[.postTransfer] ?? times[.preTransfer], requestSent == nil || !observedHead {
            requestSent = origin + sent
        }
        if !observedHead, let first = times[.startTransfer], first > 0 {
            firstResponseByte = origin + first
        }
    }

    /// The final event. `requestBody` is the body known only once sent (streams).
    func finished(error: Error?, requestBody: CapturedBody?, at end: Double? = nil) -> Message {
        let flowError = error.map(FlowFailure.describe)
        let state: FlowState
        if let flowError {
            state = flowError.domain == NSURLErrorDomain && flowError.code == NSURLErrorCancelled ? .cancelled : .failed
        } else {
            state = .completed
        }
        return finished(state: state, error: flowError, requestBody: requestBody, at: end)
    }

    /// The final event, for a client whose errors are not `NSError`s: the
    /// caller says how the flow ended and describes the error; a gRPC call
    /// adds its status and trailers.
    package func finished(state: FlowState, error flowError: FlowError?, requestBody: CapturedBody?, at end: Double? = nil,
                          grpc outcome: GRPCOutcome? = nil, webSocket webSocketOutcome: WebSocketOutcome? = nil) -> Message {
        let finished = end ?? clock.offset(since: start)
        let finalTiming = Timing(
            startedAt: start.date,
            requestSent: requestSent,
            firstResponseByte: firstResponseByte,
            finished: finished,
            phases: phases ?? measuredPhases(finished: finished)
        )
        var finalResponse = response
        if let capturedResponseBody {
            if response != nil { finalResponse?.body = capturedResponseBody }
        } else if response != nil, responseBody.size > 0 || flowError == nil {
            finalResponse?.body = responseBody.captured
        }
        if let framing = responseFraming, responseBodyIsDecoded ?? framing.isCoded { finalResponse?.body?.isDecoded = true }
        return .flowFinished(FlowFinished(
            id: id,
            state: state,
            response: finalResponse,
            requestBody: requestBody,
            error: flowError,
            timing: finalTiming,
            redirects: redirects,
            clientHeaders: clientHeaders,
            changes: changedAfterStart ? changes : nil,
            grpc: outcome,
            localAddress: localAddressAfterStart ? localAddress : nil,
            webSocket: webSocketOutcome
        ))
    }

}
