// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import HTTPTypes
import Hummingbird
import NIOCore
import WireProtocol

/// Records every request a Hummingbird 2 service receives as an inbound flow,
/// and runs its handler so that the calls the handler makes (through a
/// captured AsyncHTTPClient, OpenAPI client or URLSession) name that flow as
/// their parent.
///
/// Add it to the router, outermost, so it sees what the client sent and what
/// the client got:
///
/// ```swift
/// let agent = try CaptureAgent.start()
/// let router = Router(context: BasicRequestContext.self)
/// router.add(middleware: InboundCaptureMiddleware(agent: agent))
/// ```
///
/// Bodies stream through untouched (each buffer is passed on as it comes, so
/// a chunked or server-sent-events response keeps its timing); the log keeps
/// up to the agent's body capture limit of each. A handler's thrown error is
/// recorded as the status Hummingbird answers with. A context that conforms
/// to `RemoteAddressRequestContext` gives the client's address.
public struct InboundCaptureMiddleware<Context: RequestContext>: RouterMiddleware {
    private let numbering: FlowNumbering

    /// Captures the requests the router receives into `agent`.
    public init(agent: CaptureAgent) {
        numbering = FlowNumbering(agent: agent)
    }

    /// Records one request and the handler's answer; see the type's documentation.
    public func handle(
        _ input: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let flow = InboundRecording(
            agent: numbering.agent, method: input.method.rawValue, url: Self.url(of: input.head),
            headers: Self.headers(of: input.head), peer: Self.peer(of: context),
            server: .hummingbird, sessionID: numbering.sessionID, taskID: numbering.nextTaskID()
        ) else {
            return try await next(input, context)
        }
        var request = input
        if flow.isControlled {
            switch await decide(&request, flow: flow) {
            case .answer(let answer): return Self.response(answer)
            case .handle: break
            }
        } else {
            request.body = RequestBody(asyncSequence: RecordingRequestBody(base: input.body, flow: flow))
        }
        var response: Response
        do {
            response = try await CaptureAgent.handling(flow.id) { try await next(request, context) }
        } catch {
            await Self.record(error, answering: input, context: context, in: flow)
            throw error
        }
        let status = Int(response.status.code), fields = Self.fields(response.headers)
        if flow.respondedMayHold(statusCode: status, headers: fields) {
            if let held = await Self.wholeBody(of: response, limit: flow.holdLimit) {
                return Self.response(await flow.decideResponse(ExchangeResponse(statusCode: status, headers: fields, body: held)))
            }
            flow.deliverUnheld()
        }
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            let recording = RecordingResponseWriter(base: writer, flow: flow)
            do {
                try await body.write(recording)
                flow.finished()
            } catch {
                flow.finished(error: recording.failure(error))
                throw error
            }
        }
        return response
    }

    /// What Hummingbird answers a thrown error with: the error's own response
    /// when it is an `HTTPResponseError`, else 500 with no body.
    private static func record(_ error: any Error, answering request: Request, context: Context, in flow: InboundRecording) async {
        guard let responseError = error as? any HTTPResponseError,
              let response = try? responseError.response(from: request, context: context) else {
            flow.responded(statusCode: 500, headers: [])
            flow.finished()
            return
        }
        flow.responded(statusCode: Int(response.status.code), headers: fields(response.headers))
        try? await response.body.write(RecordingResponseWriter(base: DiscardingWriter(), flow: flow))
        flow.finished()
    }

    /// The URL as the client addressed it. On HTTP/1 Hummingbird moves the
    /// `Host` field into the request's authority; the scheme is known only
    /// when the client sent one (HTTP/2), else it is taken to be http.
    static func url(of head: HTTPRequest) -> String {
        let scheme = head.scheme ?? "http"
        let authority = head.authority ?? "localhost"
        return "\(scheme)://\(authority)\(head.path ?? "/")"
    }

    /// The fields as the client sent them: `Host` first (HTTP/1 carries the
    /// authority in it), then the rest in order.
    static func headers(of head: HTTPRequest) -> [HTTPHeader] {
        var fields = self.fields(head.headerFields)
        if let authority = head.authority, head.headerFields[.host] == nil {
            fields.insert(HTTPHeader(name: "Host", value: authority), at: 0)
        }
        return fields
    }

    static func fields(_ fields: HTTPFields) -> [HTTPHeader] {
        fields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
    }

    static func peer(of context: Context) -> String? {
        guard let address = (context as? any RemoteAddressRequestContext)?.remoteAddress else { return nil }
        return PeerAddress.text(ip: address.ipAddress, port: address.port, unixPath: address.pathname)
    }
}

extension HTTPField.Name {
    /// HTTP/1's `Host`, which Hummingbird turns into the request's authority.
    static let host = HTTPField.Name("Host")!
}
#endif
