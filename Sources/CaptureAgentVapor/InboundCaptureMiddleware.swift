// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgent
import Foundation
import NIOCore
import Vapor
import WireProtocol

/// Records every request a Vapor 4 service receives as an inbound flow, and
/// runs the rest of the chain so that the calls its route handlers make
/// (through a captured client: `req.client` with
/// ``Vapor/Application/Clients/Provider/captured(by:)``, AsyncHTTPClient,
/// OpenAPI or URLSession) name that flow as their parent.
///
/// Put it first, before Vapor's `ErrorMiddleware`, so it records what the
/// client got, errors and unknown routes included:
///
/// ```swift
/// let agent = try CaptureAgent.start()
/// app.middleware.use(InboundCaptureMiddleware(agent: agent), at: .beginning)
/// ```
///
/// The request body is recorded as the route collected it (Vapor's default
/// `body: .collect`); a route that streams its body (`body: .stream`) reads
/// it past any middleware, so its flow has none. A whole response body (a
/// buffer, data or string) is recorded; a streamed one (`Response.Body(stream:)`,
/// `asyncStream:`) goes to the client untouched and unrecorded, since Vapor
/// gives a middleware no way to see it go by.
///
/// A WebSocket route (`app.webSocket("chat") { req, ws in … }`) is captured
/// too, as one flow per connection: the upgrade, then each message, ping,
/// pong and close either way, until the connection closes (docs/AGENT.md).
public struct InboundCaptureMiddleware: AsyncMiddleware {
    let numbering: FlowNumbering

    /// Captures the requests the application receives into `agent`.
    ///
    /// ```swift
    /// app.middleware.use(InboundCaptureMiddleware(agent: agent), at: .beginning)
    /// ```
    public init(agent: CaptureAgent) {
        numbering = FlowNumbering(agent: agent)
    }

    /// Records one request and the rest of the chain's answer; see the type's documentation.
    public func respond(to request: Vapor.Request, chainingTo next: any AsyncResponder) async throws -> Vapor.Response {
        // Mapped once: the upgrade check and the flow read the same fields.
        let headers = request.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        if WebSocketRecording.isUpgrade(headers) {
            return try await captureWebSocket(request, chainingTo: next)
        }
        guard let flow = InboundRecording(
            agent: numbering.agent, method: request.method.rawValue, url: Self.url(of: request),
            headers: headers, peer: Self.peer(of: request),
            server: .vapor, sessionID: numbering.sessionID, taskID: numbering.nextTaskID()
        ) else {
            return try await next.respond(to: request)
        }
        var request = request
        if flow.isControlled {
            switch await Self.decide(&request, flow: flow) {
            case .answer(let answer): return Self.response(answer)
            case .handle: break
            }
        }
        let response: Vapor.Response
        do {
            response = try await CaptureAgent.handling(flow.id) { try await next.respond(to: request) }
        } catch {
            Self.record(request.body.data, in: flow)
            flow.responded(statusCode: Int((error as? any AbortError)?.status.code ?? 500), headers: [])
            flow.finished()
            throw error
        }
        Self.record(request.body.data, in: flow)
        let fields = response.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        let body = response.body.data
        if flow.respondedMayHold(statusCode: Int(response.status.code), headers: fields) {
            if let body, body.count <= flow.holdLimit {
                let held = ExchangeResponse(statusCode: Int(response.status.code), headers: fields, body: body)
                return Self.response(await flow.decideResponse(held))
            }
            flow.deliverUnheld()
        }
        body?.withUnsafeBytes { flow.responseBody($0) }
        flow.finished()
        return response
    }

    /// The request body as the route collected it, recorded once.
    private static func record(_ body: ByteBuffer?, in flow: InboundRecording) {
        body?.withUnsafeReadableBytes { flow.requestBody($0) }
        flow.requestEnded()
    }

    /// The URL as the client addressed it: the scheme the server speaks,
    /// `Host`, the path and query.
    static func url(of request: Vapor.Request) -> String {
        let tls = request.application.http.server.configuration.tlsConfiguration != nil
        let host = request.headers.first(name: "Host") ?? request.application.http.server.configuration.hostname
        return "\(tls ? "https" : "http")://\(host)\(request.url.string)"
    }

    static func peer(of request: Vapor.Request) -> String? {
        guard let address = request.remoteAddress else { return nil }
        return PeerAddress.text(ip: address.ipAddress, port: address.port, unixPath: address.pathname)
    }
}
#endif
