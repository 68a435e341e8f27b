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
    package let id = FlowID()
    private let sessionID: Int
    private let taskID: Int
    private let configuration: CaptureAgent.Configuration
    private let clock: FlowClock
    private let start: FlowClock.Start
    private var request: Request
    private var requestSent: Double?
    private var firstResponseByte: Double?
    private var redirects: [RedirectHop] = []
    private var response: Response?
    private var responseBody: BodyCapture
    /// Which client captured the flow, and how; sent with `flowStarted`.
    package var source: CaptureSource?
    /// The response body bytes are after the client removed a content coding.
    package var responseBodyIsDecoded = false

    init(
        request urlRequest: URLRequest,
        additionalHeaders: [AnyHashable: Any]?,
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock
    ) {
        self.init(
            method: urlRequest.httpMethod ?? "GET",
            url: urlRequest.url,
            headers: Self.requestHeaders(urlRequest.allHTTPHeaderFields ?? [:], additional: additionalHeaders),
            sessionID: sessionID,
            taskID: taskID,
            configuration: configuration,
            clock: clock
        )
    }

    /// A flow for a request described by plain values; `headers` as the app
    /// set them, in order. The URL and headers are redacted here.
    package init(
        method: String,
        url: URL?,
        headers: [HTTPHeader],
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock,
        start: FlowClock.Start? = nil
    ) {
        self.init(method: method, redactedURL: url.map(configuration.redacting) ?? "", headers: headers,
                  sessionID: sessionID, taskID: taskID, configuration: configuration, clock: clock, start: start)
    }

    /// The same, for a URL given as text (redacted here too: parsed only
    /// when it has a query or credentials to redact).
    package init(
        method: String,
        url: String,
        headers: [HTTPHeader],
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock,
        start: FlowClock.Start? = nil
    ) {
        self.init(method: method, redactedURL: configuration.redacting(urlText: url), headers: headers,
                  sessionID: sessionID, taskID: taskID, configuration: configuration, clock: clock, start: start)
    }

    private init(
        method: String,
        redactedURL: String,
        headers: [HTTPHeader],
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock,
        start: FlowClock.Start?
    ) {
        self.sessionID = sessionID
        self.taskID = taskID
        self.configuration = configuration
        self.clock = clock
        self.start = start ?? clock.start()
        self.responseBody = BodyCapture(limit: configuration.bodyCaptureLimit)
        self.request = Request(method: method, url: redactedURL, headers: configuration.redacting(headers))
    }

    /// The headers the request goes out with, as far as Foundation exposes
    /// them: the request's own fields, then the session's additional headers
    /// it does not override, each group sorted by name (Foundation keeps them
    /// in dictionaries, so the order they were set in is already lost).
    static func requestHeaders(_ own: [String: String], additional: [AnyHashable: Any]?) -> [HTTPHeader] {
        let ownNames = Set(own.keys.map { $0.lowercased() })
        let extra = (additional ?? [:]).compactMap { key, value -> HTTPHeader? in
            guard let name = key as? String, !ownNames.contains(name.lowercased()) else { return nil }
            return HTTPHeader(name: name, value: "\(value)")
        }
        return sortedHeaders(own) + extra.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    static func sortedHeaders(_ fields: [String: String]) -> [HTTPHeader] {
        fields.map { HTTPHeader(name: $0.key, value: $0.value) }.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// Header fields the client added on the way to the wire (redacted
    /// here); set before ``started()``.
    package mutating func setClientHeaders(_ headers: [HTTPHeader]) {
        request.clientHeaders = configuration.redacting(headers)
    }

    /// A body known before sending (data, file prefix) goes in `flowStarted`.
    package mutating func setRequestBody(_ body: CapturedBody?) {
        request.body = body
    }

    private var timing: Timing {
        Timing(startedAt: start.date, requestSent: requestSent, firstResponseByte: firstResponseByte)
    }

    package func started() -> Message {
        .flowStarted(NetworkLog(id: id, sessionID: sessionID, taskID: taskID, request: request, timing: timing, source: source))
    }

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

    mutating func received(_ urlResponse: URLResponse) -> Message {
        let http = urlResponse as? HTTPURLResponse
        let fields = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { result, field in
            if let name = field.key as? String { result[name] = "\(field.value)" }
        }
        return received(statusCode: http?.statusCode ?? 0, headers: Self.sortedHeaders(fields), mimeType: urlResponse.mimeType)
    }

    /// The response head has arrived; `headers` as received, in order.
    package mutating func received(statusCode: Int, headers: [HTTPHeader], mimeType: String?) -> Message {
        let now = clock.offset(since: start)
        if requestSent == nil { requestSent = now }
        firstResponseByte = now
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

    /// The final event. `requestBody` is the body known only once sent (streams).
    func finished(error: Error?, requestBody: CapturedBody?) -> Message {
        let flowError = error.map(Self.flowError)
        let state: FlowState
        if let flowError {
            state = flowError.domain == NSURLErrorDomain && flowError.code == NSURLErrorCancelled ? .cancelled : .failed
        } else {
            state = .completed
        }
        return finished(state: state, error: flowError, requestBody: requestBody)
    }

    /// The final event, for a client whose errors are not `NSError`s: the
    /// caller says how the flow ended and describes the error.
    package func finished(state: FlowState, error flowError: FlowError?, requestBody: CapturedBody?) -> Message {
        let finalTiming = Timing(
            startedAt: start.date,
            requestSent: requestSent,
            firstResponseByte: firstResponseByte,
            finished: clock.offset(since: start)
        )
        var finalResponse = response
        if response != nil, responseBody.size > 0 || flowError == nil {
            var body = responseBody.captured
            body.isDecoded = responseBodyIsDecoded
            finalResponse?.body = body
        }
        return .flowFinished(FlowFinished(
            id: id,
            state: state,
            response: finalResponse,
            requestBody: requestBody,
            error: flowError,
            timing: finalTiming,
            redirects: redirects
        ))
    }

    static func flowError(_ error: Error) -> FlowError {
        let nsError = error as NSError
        return FlowError(domain: nsError.domain, code: nsError.code, message: nsError.localizedDescription)
    }
}
