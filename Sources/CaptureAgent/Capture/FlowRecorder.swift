import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// Builds the log of one captured exchange and the events that carry it:
/// `flowStarted`, `flowResponse`, `flowFinished`. Redaction happens here,
/// so only the log ever sees redacted values.
struct FlowRecorder {
    let id = FlowID()
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

    init(
        request urlRequest: URLRequest,
        additionalHeaders: [AnyHashable: Any]?,
        sessionID: Int,
        taskID: Int,
        configuration: CaptureAgent.Configuration,
        clock: FlowClock
    ) {
        self.sessionID = sessionID
        self.taskID = taskID
        self.configuration = configuration
        self.clock = clock
        self.start = clock.start()
        self.responseBody = BodyCapture(limit: configuration.bodyCaptureLimit)
        let headers = Self.requestHeaders(urlRequest.allHTTPHeaderFields ?? [:], additional: additionalHeaders)
        self.request = Request(
            method: urlRequest.httpMethod ?? "GET",
            url: urlRequest.url.map(configuration.redacting) ?? "",
            headers: configuration.redacting(headers)
        )
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

    /// What traffic rules changed, redacted like the rest of the request.
    private(set) var changes: FlowChanges?

    mutating func setChanges(_ changes: FlowChanges) {
        var redacted = changes
        redacted.originalURL = changes.originalURL.flatMap(URL.init(string:)).map(configuration.redacting) ?? changes.originalURL
        redacted.originalHeaders = changes.originalHeaders.map(configuration.redacting)
        self.changes = redacted
    }

    /// A body known before sending (data, file prefix) goes in `flowStarted`.
    mutating func setRequestBody(_ body: CapturedBody?) {
        request.body = body
    }

    private var timing: Timing {
        Timing(startedAt: start.date, requestSent: requestSent, firstResponseByte: firstResponseByte)
    }

    func started() -> Message {
        .flowStarted(NetworkLog(id: id, sessionID: sessionID, taskID: taskID, request: request, timing: timing, changes: changes))
    }

    /// The request (with its body) has gone out; later calls move the mark.
    mutating func markRequestSent() {
        requestSent = clock.offset(since: start)
    }

    mutating func redirected(_ response: HTTPURLResponse, to newRequest: URLRequest) {
        redirects.append(RedirectHop(
            statusCode: response.statusCode,
            from: response.url.map(configuration.redacting) ?? "",
            to: newRequest.url.map(configuration.redacting) ?? ""
        ))
    }

    mutating func received(_ urlResponse: URLResponse) -> Message {
        let now = clock.offset(since: start)
        if requestSent == nil { requestSent = now }
        firstResponseByte = now
        let http = urlResponse as? HTTPURLResponse
        let fields = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { result, field in
            if let name = field.key as? String { result[name] = "\(field.value)" }
        }
        let response = Response(
            statusCode: http?.statusCode ?? 0,
            headers: configuration.redacting(Self.sortedHeaders(fields)),
            mimeType: urlResponse.mimeType
        )
        self.response = response
        responseBody = BodyCapture(limit: configuration.bodyCaptureLimit)
        return .flowResponse(FlowResponse(id: id, response: response, timing: timing, redirects: redirects))
    }

    mutating func receivedBody(_ data: Data) {
        responseBody.append(data)
    }

    /// The final event. `requestBody` is the body known only once sent (streams).
    func finished(error: Error?, requestBody: CapturedBody?) -> Message {
        let finalTiming = Timing(
            startedAt: start.date,
            requestSent: requestSent,
            firstResponseByte: firstResponseByte,
            finished: clock.offset(since: start)
        )
        var finalResponse = response
        if response != nil, responseBody.size > 0 || error == nil {
            finalResponse?.body = responseBody.captured
        }
        let flowError = error.map(Self.flowError)
        let state: FlowState
        if let flowError {
            state = flowError.domain == NSURLErrorDomain && flowError.code == NSURLErrorCancelled ? .cancelled : .failed
        } else {
            state = .completed
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
