// Built with the OpenAPI trait (on by default; Package.swift).
#if OpenAPI
import CaptureAgent
import Foundation
import HTTPTypes
import OpenAPIRuntime
import WireProtocol

/// A swift-openapi `ClientMiddleware` that records each operation's HTTP
/// exchange, with its operation ID, and streams it to the inspector. Works
/// with any transport (AsyncHTTPClient, URLSession, your own).
///
/// Put it last in the generated client's `middlewares`, so it records the
/// request as the transport gets it and the response as the transport
/// returned it:
///
/// ```swift
/// import CaptureAgent
/// import CaptureAgentOpenAPI
/// import OpenAPIAsyncHTTPClient
///
/// let agent = try CaptureAgent.start()
/// let client = Client(
///     serverURL: URL(string: "http://127.0.0.1:8080/api")!,
///     transport: AsyncHTTPClientTransport(),
///     middlewares: [AuthenticationMiddleware(), CaptureMiddleware(agent: agent)]
/// )
/// ```
///
/// It never reads a body itself: request and response bodies are copied as
/// the transport and the app pull them (up to the agent's
/// `bodyCaptureLimit`), keeping their length and iteration behaviour. Errors
/// pass through unchanged; it throws none of its own. The flow ends when the
/// app has read the response body to its end (or stopped: then it is logged
/// as cancelled with what was read), or at once when there is no body.
public struct CaptureMiddleware: ClientMiddleware {
    /// The agent whose configuration and stream the flows go to.
    public let agent: CaptureAgent
    /// This middleware's number among the agent's clients, and its flows'.
    private let numbering: FlowNumbering

    /// Creates a middleware recording into `agent`.
    ///
    /// ```swift
    /// let capture = CaptureMiddleware(agent: agent)
    /// ```
    public init(agent: CaptureAgent) {
        self.agent = agent
        numbering = FlowNumbering(agent: agent)
    }

    /// Records the exchange of one operation; see the type's documentation.
    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard agent.isCapturing, let url = Self.url(of: request, baseURL: baseURL), agent.configuration.shouldCapture(url) else {
            return try await next(request, body, baseURL)
        }
        var outgoing = Outgoing(request: request, body: body, baseURL: baseURL, url: url)
        let taskID = numbering.nextTaskID()
        let (controlled, action) = ControlledFlow.start(outgoing.exchange, as: flowStart(for: outgoing, taskID: taskID, operationID: operationID),
                                                        agent: agent)
        let flow = OpenAPIFlow(controlled.recording)
        switch action {
        case .send(let exchange):
            if controlled.changes != nil { outgoing.apply(exchange) }
        case .answer(let response):
            try await controlled.wait(controlled.effect.latency)
            flow.recording.answered(with: response)
            let head = HTTPResponse(status: HTTPResponse.Status(code: response.statusCode), headerFields: HTTPFields(response.headers))
            return (head, Self.paced(HTTPBody(response.body), bytesPerSecond: controlled.effect.downBytesPerSecond))
        case .fail(let failure):
            try await controlled.wait(controlled.effect.latency)
            let error = failure.urlError(url: outgoing.url)
            flow.recording.finish(.failed(FlowFailure.describe(error)))
            throw error
        }
        if controlled.requestReady() == .hold {
            try await holdRequest(&outgoing, flow: controlled)
        }

        let effect = controlled.effect
        let sentBody = Self.paced(outgoing.body.map { flow.tee($0, side: .request) }, bytesPerSecond: effect.upBytesPerSecond)
        let response: HTTPResponse
        let responseBody: HTTPBody?
        do {
            let (head, body) = try await next(outgoing.request, sentBody, outgoing.baseURL)
            try await Self.waitForLatency(of: controlled)
            (response, responseBody) = (head, Self.paced(body, bytesPerSecond: effect.downBytesPerSecond))
        } catch {
            flow.finish(error: error)
            throw error
        }
        flow.received(response)
        if let held = try await holdResponse(response, body: responseBody, flow: controlled) {
            return held
        }
        guard let responseBody, flow.isBuilt else {
            // No body, or none to copy: the flow ends now (a flow that is
            // not built only counts its end).
            flow.finish(error: nil)
            return (response, responseBody)
        }
        return (response, flow.tee(responseBody, side: .response))
    }

    /// The flow of one operation, as it starts.
    private func flowStart(for outgoing: Outgoing, taskID: Int, operationID: String) -> FlowStart {
        var start = FlowStart(method: outgoing.request.method.rawValue, url: outgoing.url.absoluteString,
                              headers: outgoing.request.headerFields.headers, sessionID: numbering.sessionID, taskID: taskID)
        start.source = CaptureSource(client: .openAPI, operationID: operationID)
        start.parentID = CaptureAgent.currentInboundFlowID   // the middleware runs on the caller's task
        return start
    }

    /// The URL the transports build: the base URL's path, then the request's
    /// path and query.
    static func url(of request: HTTPRequest, baseURL: URL) -> URL? {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true) else { return nil }
        let requestPart = URLComponents(string: request.path ?? "")
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + (requestPart?.percentEncodedPath ?? "")
        components.percentEncodedQuery = requestPart?.percentEncodedQuery
        return components.url
    }
}

/// One operation's exchange, in `HTTPTypes` terms, reported to its
/// ``FlowRecording`` (which owns the recorder and its lock: the transport
/// and the app pull bodies on tasks of their own). Kept alive by the body
/// taps until the response body is done with.
struct OpenAPIFlow: Sendable {
    let recording: FlowRecording
    private var flow: FlowRecording { recording }

    init(_ recording: FlowRecording) {
        self.recording = recording
    }

    var id: FlowID { flow.id }

    /// Whether the flow builds its events (else there is nothing to copy).
    var isBuilt: Bool { flow.isBuilt }

    /// The flow as it stands (what a held response shows); nil when not built.
    var log: NetworkLog? { flow.log }

    /// ``FlowRecording/withLog(_:)``: what a breakpoint's filter reads.
    func withLog<Result>(_ body: (() -> NetworkLog) -> Result) -> Result? { flow.withLog(body) }

    /// `body`, copied into the flow as its consumer pulls it (only for a built flow).
    func tee(_ body: HTTPBody, side: BodyTap.Side) -> HTTPBody {
        guard flow.isBuilt else { return body }
        return BodyTap(flow: self, side: side).tee(body)
    }

    func requestChunk(_ chunk: ArraySlice<UInt8>) {
        chunk.withUnsafeBytes { flow.requestBody($0) }
    }

    func requestSent() {
        flow.requestEnded()
    }

    func responseChunk(_ chunk: ArraySlice<UInt8>) {
        chunk.withUnsafeBytes { flow.responseBody($0) }
    }

    func received(_ response: HTTPResponse) {
        flow.respond { recorder in
            recorder.received(statusCode: response.status.code, headers: response.headerFields.headers,
                              mimeType: MediaType.essence(of: response.headerFields[.contentType]))
        }
    }

    func responseEnded(_ outcome: BodyTap.Outcome) {
        switch outcome {
        case .ended, .neverRead:
            // Never read: the app (or the generated code) did not ask for the
            // body; the exchange is logged as completed without one.
            finish(error: nil)
        case .failed(let error):
            finish(error: error)
        case .abandoned(let bytes):
            flow.finish(.cancelled(FlowError(
                domain: "CaptureAgent", code: 0,
                message: "the app stopped reading the response body after \(bytes) bytes"
            )))
        }
    }

    func finish(error: Error?) {
        guard let error else {
            flow.finish(.completed)
            return
        }
        // The runtime wraps the transport's error; the log names the cause.
        flow.finish(.thrown((error as? ClientError)?.underlyingError ?? error, cancelled: Task.isCancelled))
    }
}

/// Copies a body as its consumer pulls it, and tells the flow how the first
/// pass over it ended. A later pass (a body that can be iterated more than
/// once) goes through uncopied.
final class BodyTap: @unchecked Sendable {
    enum Side { case request, response }
    enum Outcome {
        case ended
        case failed(Error)
        case abandoned(bytes: Int)
        case neverRead
    }

    private let flow: OpenAPIFlow
    private let side: Side
    private let lock = NSLock()
    // Behind `lock`.
    private var passes = 0
    private var bytes = 0
    private var isDone = false

    init(flow: OpenAPIFlow, side: Side) {
        self.flow = flow
        self.side = side
    }

    /// `body`, as the same length and iteration behaviour, copied through this tap.
    func tee(_ body: HTTPBody) -> HTTPBody {
        HTTPBody(TeeSequence(base: body, tap: self), length: body.length, iterationBehavior: body.iterationBehavior)
    }

    /// Whether the pass starting now is the one copied.
    fileprivate func beginPass() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        passes += 1
        return passes == 1
    }

    fileprivate func chunk(_ chunk: ArraySlice<UInt8>) {
        lock.lock()
        bytes += chunk.count
        lock.unlock()
        switch side {
        case .request: flow.requestChunk(chunk)
        case .response: flow.responseChunk(chunk)
        }
    }

    fileprivate func end(_ outcome: Outcome) {
        lock.lock()
        let first = !isDone
        isDone = true
        lock.unlock()
        guard first else { return }
        switch side {
        case .request: if case .ended = outcome { flow.requestSent() }
        case .response: flow.responseEnded(outcome)
        }
    }

    deinit {
        // The body was let go of before its end was read.
        end(passes == 0 ? .neverRead : .abandoned(bytes: bytes))
    }
}

/// The async sequence inside a teed `HTTPBody`.
struct TeeSequence: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    let base: HTTPBody
    let tap: BodyTap

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), tap: tap, copies: tap.beginPass())
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPBody.Iterator
        let tap: BodyTap
        let copies: Bool

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            do {
                let chunk = try await base.next()
                if copies {
                    if let chunk { tap.chunk(chunk) } else { tap.end(.ended) }
                }
                return chunk
            } catch {
                if copies { tap.end(.failed(error)) }
                throw error
            }
        }
    }
}
#endif
