// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WireProtocol

/// The middleware's side of the viewer's control (an app that allows it):
/// ``InboundRecording`` decides; this only speaks Hummingbird. A router
/// middleware runs before the route is looked up, so a changed path reaches
/// another route, and a map-local answer needs no route at all.
extension InboundCaptureMiddleware {
    /// Asks the control core about `request` and changes it as decided.
    /// A request a breakpoint may hold is read whole first (when its length
    /// is known and within the hold limit), so the person sees its body.
    func decide(_ request: inout Request, flow: InboundRecording) async -> InboundAction {
        var body: Data?
        if flow.mayHoldRequest, let length = Self.declaredLength(of: request.head), length <= flow.holdLimit {
            body = length == 0 ? Data() : try? await Data(request.body.collect(upTo: length).readableBytesView)
            if let body { request.body = RequestBody(buffer: ByteBuffer(bytes: body)) }
        }
        let action = await flow.decideRequest(body: body)
        if case .handle(let changed?) = action {
            request = Self.request(request, changedTo: changed)
        }
        if body == nil, case .handle = action {
            request.body = RequestBody(asyncSequence: RecordingRequestBody(base: request.body, flow: flow))
        }
        return action
    }

    /// The body length the request's head declares: `Content-Length`, or
    /// none at all on a request with neither it nor `Transfer-Encoding`;
    /// nil when only reading it would tell.
    static func declaredLength(of head: HTTPRequest) -> Int? {
        if let length = head.headerFields[.contentLength] { return Int(length) }
        return head.headerFields[.transferEncoding] == nil ? 0 : nil
    }

    /// `original` as the rules or a person changed it: method, path and
    /// query, fields and (when the change has one) body.
    static func request(_ original: Request, changedTo changed: ExchangeRequest) -> Request {
        var head = original.head
        if let method = HTTPRequest.Method(changed.method) { head.method = method }
        if let components = URLComponents(url: changed.url, resolvingAgainstBaseURL: false) {
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            head.path = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
        head.headerFields = HTTPFields(changed.headers.filter { !HTTPHeader.namesMatch($0.name, "Host") || head.authority == nil })
        guard !changed.bodyStreams else { return Request(head: head, body: original.body) }
        let body = changed.body ?? Data()
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.transferEncoding] = nil
        return Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body)))
    }

    /// A response the control core made (a map-local answer, an edit, a kill).
    static func response(_ answer: ExchangeResponse) -> Response {
        var fields = HTTPFields(answer.headers)
        fields[.contentLength] = String(answer.body.count)
        fields[.transferEncoding] = nil
        return Response(status: HTTPResponse.Status(code: answer.statusCode), headers: fields,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    /// The whole body of a response a breakpoint holds, when its length is
    /// known and within `limit`; nil when it is not (it then streams unheld).
    static func wholeBody(of response: Response, limit: Int) async -> Data? {
        guard let length = response.body.contentLength, length <= limit else { return nil }
        let collector = CollectingWriter()
        do {
            try await response.body.write(collector)
        } catch {
            return nil
        }
        return collector.data
    }
}

/// Keeps a whole response body, to hold it.
final class CollectingWriter: ResponseBodyWriter {
    var data = Data()
    func write(_ buffer: ByteBuffer) async throws {
        data.append(contentsOf: buffer.readableBytesView)
    }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

extension HTTPFields {
    /// Fields from the log's list, in order; a name HTTP does not allow is left out.
    init(_ headers: [HTTPHeader]) {
        self.init()
        for header in headers {
            if let name = HTTPField.Name(header.name) { append(HTTPField(name: name, value: header.value)) }
        }
    }
}
#endif
