// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import Vapor
import WireProtocol

/// The middleware's side of the viewer's control (an app that allows it):
/// ``InboundRecording`` decides; this only speaks Vapor. A global middleware
/// runs before the route is looked up, so a changed path reaches another
/// route, and a map-local answer needs no route at all.
extension InboundCaptureMiddleware {
    /// Asks the control core about `request` and changes it as decided. A
    /// request a breakpoint may hold has its body collected first (as the
    /// route would), when its length is within the hold limit.
    static func decide(_ request: inout Vapor.Request, flow: InboundRecording) async -> InboundAction {
        var body: Data?
        if flow.mayHoldRequest, let length = declaredLength(of: request.headers), length <= flow.holdLimit {
            let collected = length == 0 ? nil : try? await request.body.collect(max: length).get()
            body = collected.map { Data($0.readableBytesView) } ?? (length == 0 ? Data() : nil)
        }
        let action = await flow.decideRequest(body: body)
        if case .handle(let changed?) = action {
            request = Self.request(request, changedTo: changed)
        }
        return action
    }

    /// The body length the head declares: `Content-Length`, or none on a
    /// request with neither it nor `Transfer-Encoding`; nil when only
    /// reading it would tell.
    static func declaredLength(of headers: HTTPHeaders) -> Int? {
        if let length = headers.first(name: "Content-Length") { return Int(length) }
        return headers.contains(name: "Transfer-Encoding") ? nil : 0
    }

    /// `original` as the rules or a person changed it. Method, URL and
    /// fields change in place (the request keeps its storage); a changed
    /// body needs a new request, as Vapor's body cannot be replaced.
    static func request(_ original: Vapor.Request, changedTo changed: ExchangeRequest) -> Vapor.Request {
        original.method = HTTPMethod(rawValue: changed.method)
        if let components = URLComponents(url: changed.url, resolvingAgainstBaseURL: false) {
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            original.url = URI(string: path + (components.percentEncodedQuery.map { "?" + $0 } ?? ""))
        }
        original.headers = HTTPHeaders(changed.headers.map { ($0.name, $0.value) })
        guard !changed.bodyStreams else { return original }
        let body = changed.body ?? Data()
        let replaced = Vapor.Request(application: original.application, method: original.method, url: original.url,
                               version: original.version, headers: original.headers,
                               collectedBody: ByteBuffer(bytes: body), remoteAddress: original.remoteAddress,
                               logger: original.logger, byteBufferAllocator: original.byteBufferAllocator,
                               on: original.eventLoop)
        replaced.headers.remove(name: "Transfer-Encoding")
        return replaced
    }

    /// A response the control core made (a map-local answer, an edit, a kill).
    static func response(_ answer: ExchangeResponse) -> Vapor.Response {
        var headers = HTTPHeaders(answer.headers.map { ($0.name, $0.value) })
        headers.remove(name: "Transfer-Encoding")
        headers.replaceOrAdd(name: "Content-Length", value: String(answer.body.count))
        return Vapor.Response(status: HTTPResponseStatus(statusCode: answer.statusCode), headers: headers,
                        body: Response.Body(data: answer.body))
    }
}
#endif
