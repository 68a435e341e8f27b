// Built with the OpenAPI trait (on by default; Package.swift).
#if OpenAPI
import CaptureAgent
import Foundation
import HTTPTypes
import OpenAPIRuntime
import WireProtocol

/// The OpenAPI adapter's translation to and from the control core
/// (``ExchangeControl`` decides; this only speaks `HTTPTypes`). A middleware
/// sees each request before the transport and may change it, answer it, or
/// wait before calling `next`, so every control power works here, on any transport.
extension CaptureMiddleware {
    /// A request as the transport will get it.
    struct Outgoing {
        var request: HTTPRequest
        var body: HTTPBody?
        var baseURL: URL
        var url: URL

        /// As the control core sees it: the body streams, unread.
        var exchange: ExchangeRequest {
            ExchangeRequest(method: request.method.rawValue, url: url, headers: request.headerFields.headers, bodyStreams: body != nil)
        }

        /// Carries out what the control core made of ``exchange``.
        mutating func apply(_ exchange: ExchangeRequest) {
            if let method = HTTPRequest.Method(exchange.method) { request.method = method }
            if exchange.url != url { retarget(to: exchange.url) }
            request.headerFields = HTTPFields(exchange.headers)
            if !exchange.bodyStreams {
                // A person's own body (or none): the original stream is not read.
                let data = exchange.body ?? Data()
                body = data.isEmpty ? nil : HTTPBody(data)
                request.headerFields[.contentLength] = data.isEmpty ? nil : String(data.count)
            }
        }

        /// Sends the request to `url` instead: its origin becomes the base URL,
        /// its path and query the request's path.
        mutating func retarget(to target: URL) {
            guard var origin = URLComponents(url: target, resolvingAgainstBaseURL: true) else { return }
            let path = (origin.percentEncodedPath.isEmpty ? "/" : origin.percentEncodedPath)
                + (origin.percentEncodedQuery.map { "?" + $0 } ?? "")
            origin.percentEncodedPath = ""
            origin.percentEncodedQuery = nil
            origin.fragment = nil
            guard let base = origin.url else { return }
            baseURL = base
            request.path = path
            if request.authority != nil { request.authority = origin.percentEncodedHost.map { host in origin.port.map { "\(host):\($0)" } ?? host } }
            url = target
        }
    }

    /// Holds a request the breakpoint filter matched; the flow records an
    /// edit. Throws `CancellationError` for a kill or the task's cancellation.
    func holdRequest(_ outgoing: inout Outgoing, flow: ControlledFlow) async throws {
        switch await flow.holdRequest() {
        case .kill, .cancelled: throw CancellationError()
        case .send(let exchange, let edited): if edited { outgoing.apply(exchange) }
        }
    }

    /// Holds a response the breakpoint filter matches before the app sees
    /// it; nil when it does not match, or when its body could not be read
    /// whole without changing what the app gets (a body read once, of
    /// unknown or excessive length, goes on unheld).
    func holdResponse(_ response: HTTPResponse, body: HTTPBody?, flow: ControlledFlow) async throws -> (HTTPResponse, HTTPBody?)? {
        guard flow.responseArrived() == .hold else { return nil }
        let tap = OpenAPIFlow(flow.recording)
        var data = Data()
        if let body {
            switch body.length {
            case .known(let length) where length <= flow.holdLimit: break
            default: guard body.iterationBehavior == .multiple else { return nil }
            }
            do {
                data = try await Data(collecting: body, upTo: flow.holdLimit)
            } catch {
                tap.finish(error: error)
                throw error
            }
        }
        data.withUnsafeBytes { tap.responseChunk(ArraySlice($0)) }
        let held = ExchangeResponse(statusCode: response.status.code, headers: response.headerFields.headers, body: data)
        switch await flow.holdResponse(held) {
        case .kill, .cancelled:
            throw CancellationError()
        case .deliver(let delivered, _):
            flow.recording.finish(.completed)
            let head = HTTPResponse(status: HTTPResponse.Status(code: delivered.statusCode), headerFields: HTTPFields(delivered.headers))
            return (head, body == nil && delivered.body.isEmpty ? nil : HTTPBody(delivered.body))
        }
    }
}

extension HTTPFields {
    /// The fields as the log lists them.
    var headers: [HTTPHeader] {
        map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
    }

    /// Fields from the log's list, in order; a name HTTP does not allow is left out.
    init(_ headers: [HTTPHeader]) {
        self.init()
        for header in headers {
            if let name = HTTPField.Name(header.name) { append(HTTPField(name: name, value: header.value)) }
        }
    }
}
#endif
