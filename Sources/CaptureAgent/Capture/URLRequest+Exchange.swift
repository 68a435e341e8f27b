import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The URLSession adapter's translation to and from the control core's values.
extension ExchangeRequest {
    /// `request` as the control core sees it; `body`: the task's own body
    /// when it has one (an upload's), else the request's.
    init?(_ request: URLRequest, body: Data? = nil) {
        guard let url = request.url else { return nil }
        let data = body ?? request.httpBody
        self.init(method: request.httpMethod ?? "GET", url: url,
                  headers: FlowRecorder.sortedHeaders(request.allHTTPHeaderFields ?? [:]),
                  body: data, bodyStreams: data == nil && request.httpBodyStream != nil)
    }

    /// `request` with the body its task sends: data is read, a file, a
    /// stream or the delegate's stream is passed on unread.
    init?(_ request: URLRequest, taskBody: TaskInternals.Body?) {
        switch taskBody {
        case .data(let data)?:
            self.init(request, body: data)
        case .none?:
            self.init(request)
            body = nil
            bodyStreams = false
        case .file?, .stream?, .askDelegate?:
            self.init(request)
            body = nil
            bodyStreams = true
        case nil:
            self.init(request)
        }
    }
}

extension URLRequest {
    /// This request with `exchange`'s method, URL, header fields and body;
    /// everything else (timeouts, cache policy) stays. A body the exchange
    /// streams stays this request's own.
    func applying(_ exchange: ExchangeRequest) -> URLRequest {
        var request = self
        request.httpMethod = exchange.method
        request.url = exchange.url
        request.allHTTPHeaderFields = [:]
        for header in exchange.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        if !exchange.bodyStreams {
            // One replaces the other in URLRequest: the stream goes first.
            request.httpBodyStream = nil
            request.httpBody = exchange.body
        }
        return request
    }
}

extension ExchangeResponse {
    init(_ response: HTTPURLResponse, body: Data) {
        let fields = (response.allHeaderFields as? [String: String]) ?? [:]
        self.init(statusCode: response.statusCode, headers: FlowRecorder.sortedHeaders(fields), body: body)
    }

    /// As Foundation hands a response to an app; repeated fields joined with ", ".
    func urlResponse(for url: URL) -> HTTPURLResponse? {
        var fields: [String: String] = [:]
        for header in headers {
            if let existing = fields.keys.first(where: { HTTPHeader.namesMatch($0, header.name) }) {
                fields[existing] = (fields[existing] ?? "") + ", " + header.value
            } else {
                fields[header.name] = header.value
            }
        }
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
    }
}

/// Replays a URLSession request: through a new session made from the
/// original session's configuration (so it is captured, and rules apply
/// again), with no delegate, so the app's delegates never hear of it.
struct URLSessionReplay: ReplaySender, @unchecked Sendable {
    // Copies, only read.
    let template: URLRequest
    let configuration: URLSessionConfiguration
    let replays: ReplayBuffer

    init(template: URLRequest, configuration: URLSessionConfiguration, replays: ReplayBuffer) {
        self.template = template
        self.configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        self.replays = replays
    }

    func send(_ request: ExchangeRequest, replaying origin: ReplayOrigin) {
        let session = URLSession(configuration: configuration)
        // swift-corelibs-foundation keeps a task's completion handler until
        // it is done; the session goes once its one task has finished.
        let task = session.dataTask(with: template.applying(request)) { _, _, _ in session.finishTasksAndInvalidate() }
        replays.expect(origin, for: ObjectIdentifier(task))
        task.resume()
    }
}

extension CaptureAgent {
    /// Keeps a URLSession request for replay (only while control is
    /// allowed) and returns the replay this task is, if it is one.
    func rememberForReplay(_ id: FlowID, task: URLSessionTask, request: URLRequest, body: Data?,
                           session: URLSession?) -> ReplayOrigin? {
        guard allowsControl else { return nil }
        let origin = replays.origin(for: ObjectIdentifier(task))
        if let configuration = session?.configuration, let exchange = ExchangeRequest(request, body: body) {
            replays.remember(id, request: exchange, sender: URLSessionReplay(template: request, configuration: configuration, replays: replays))
        }
        return origin
    }
}
