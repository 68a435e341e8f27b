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
    private let clientID: Int

    private static let nextClientID = LockedCounter(start: 1)
    private static let nextFlowNumber = LockedCounter(start: 1)

    /// Creates a middleware recording into `agent`.
    ///
    /// ```swift
    /// let capture = CaptureMiddleware(agent: agent)
    /// ```
    public init(agent: CaptureAgent) {
        self.agent = agent
        self.clientID = Self.nextClientID.next()
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
        var changes: FlowChanges?
        let controlled = agent.allowsControl
        if controlled {
            switch applyRules(to: outgoing) {
            case .send(let ruled, let applied):
                outgoing = ruled
                changes = applied
            case .answer(let response, let data, let applied):
                return answer(response, data, for: outgoing, changes: applied, operationID: operationID)
            }
        }
        var recorder = makeRecorder(for: outgoing, operationID: operationID)
        if let changes { recorder.setChanges(changes) }
        let intercepting = controlled && agent.breakpoints.isActive
        agent.emit(recorder.started())
        if intercepting, agent.breakpoints.matches(recorder.log) {
            switch await hold(recorder.id, phase: .request) {
            case .kill:
                agent.emit(recorder.finished(state: .cancelled, error: FlowError(domain: "CaptureAgent", code: 0, message: "killed at a breakpoint"),
                                             requestBody: nil))
                throw CancellationError()
            case .release(.cancelled):
                agent.emit(recorder.finished(state: .cancelled, error: FlowError(domain: "Swift", code: 0, message: "CancellationError()"),
                                             requestBody: nil))
                throw CancellationError()
            case .resume(let resume?):
                guard let edit = resume.request else { break }
                let app = outgoing
                outgoing = applying(edit, to: outgoing)
                let body = edit.body.flatMap { $0.isTruncated ? nil : $0 }
                recorder.replaceRequest(method: outgoing.request.method.rawValue, url: outgoing.url,
                                        headers: outgoing.request.headerFields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }, body: body)
                var edited = recorder.changes ?? FlowChanges(rules: [])
                edited.edited = [.request]
                if outgoing.url != app.url { edited.originalURL = edited.originalURL ?? app.url.absoluteString }
                let appHeaders = app.request.headerFields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
                if outgoing.request.headerFields != app.request.headerFields { edited.originalHeaders = edited.originalHeaders ?? appHeaders }
                recorder.setChanges(edited)
                agent.emit(recorder.started())
            case .resume(nil), .release:
                break
            }
        }
        let flow = OpenAPIFlow(agent: agent, recorder: recorder)

        let sentBody = outgoing.body.map { BodyTap(flow: flow, side: .request).tee($0) }
        let response: HTTPResponse
        let responseBody: HTTPBody?
        do {
            (response, responseBody) = try await next(outgoing.request, sentBody, outgoing.baseURL)
        } catch {
            flow.finish(error: error)
            throw error
        }
        flow.received(response)
        if intercepting, let held = try await holdResponse(response, body: responseBody, flow: flow) {
            return held
        }
        guard let responseBody else {
            flow.finish(error: nil)
            return (response, nil)
        }
        return (response, BodyTap(flow: flow, side: .response).tee(responseBody))
    }

    private func makeRecorder(for outgoing: Outgoing, operationID: String) -> FlowRecorder {
        var recorder = FlowRecorder(
            method: outgoing.request.method.rawValue,
            url: outgoing.url,
            headers: outgoing.request.headerFields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) },
            sessionID: clientID,
            taskID: Self.nextFlowNumber.next(),
            configuration: agent.configuration,
            clock: agent.clock
        )
        recorder.source = CaptureSource(client: .openAPI, operationID: operationID)
        return recorder
    }

    /// A map-local rule answered: no transport, no network.
    private func answer(_ response: HTTPResponse, _ data: Data, for outgoing: Outgoing, changes: FlowChanges,
                        operationID: String) -> (HTTPResponse, HTTPBody?) {
        var recorder = makeRecorder(for: outgoing, operationID: operationID)
        recorder.setChanges(changes)
        agent.emit(recorder.started())
        recorder.markRequestSent()
        let headers = response.headerFields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
        agent.emit(recorder.received(statusCode: response.status.code, headers: headers, mimeType: response.headerFields[.contentType]))
        data.withUnsafeBytes { recorder.receivedBody($0) }
        agent.emit(recorder.finished(state: .completed, error: nil, requestBody: nil))
        return (response, HTTPBody(data))
    }

    /// Holds a response the breakpoint filter matches before the app sees
    /// it; nil when it does not match, or when its body could not be read
    /// whole without changing what the app gets (a body read once, of
    /// unknown or excessive length, goes on unheld).
    private func holdResponse(_ response: HTTPResponse, body: HTTPBody?, flow: OpenAPIFlow) async throws -> (HTTPResponse, HTTPBody?)? {
        guard agent.breakpoints.matches(flow.log) else { return nil }
        let limit = agent.configuration.bodyCaptureLimit
        var data = Data()
        if let body {
            switch body.length {
            case .known(let length) where length <= limit: break
            default: guard body.iterationBehavior == .multiple else { return nil }
            }
            do {
                data = try await Data(collecting: body, upTo: limit)
            } catch {
                flow.finish(error: error)
                throw error
            }
        }
        data.withUnsafeBytes { flow.responseChunk(ArraySlice($0)) }
        var result = (response, data)
        switch await hold(flow.id, phase: .response, response: flow.log.response) {
        case .kill, .release(.cancelled):
            flow.finish(error: CancellationError())
            throw CancellationError()
        case .resume(let resume?):
            guard let edit = resume.response else { break }
            result = applying(edit, to: response, body: data)
            flow.replaceResponse(result.0, body: result.1)
        case .resume(nil), .release:
            break
        }
        flow.finish(error: nil)
        return (result.0, body == nil && result.1.isEmpty ? nil : HTTPBody(result.1))
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

/// One operation's exchange: the recorder and the request body's copy,
/// behind a lock (the transport and the app pull bodies on tasks of their
/// own). Kept alive by the body taps until the response body is done with.
final class OpenAPIFlow: @unchecked Sendable {
    private let agent: CaptureAgent
    private let lock = NSLock()
    // Behind `lock`.
    private var recorder: FlowRecorder
    private var requestBody: BodyCapture
    private var finished = false

    init(agent: CaptureAgent, recorder: FlowRecorder) {
        self.agent = agent
        self.recorder = recorder
        self.requestBody = BodyCapture(limit: agent.configuration.bodyCaptureLimit)
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    var id: FlowID { locked { recorder.id } }

    /// The flow as it stands (what a breakpoint's filter sees).
    var log: NetworkLog { locked { recorder.log } }

    /// A person edited the response at a breakpoint: the log shows what the
    /// app gets, and what the server had answered.
    func replaceResponse(_ response: HTTPResponse, body: Data) {
        let headers = response.headerFields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
        let event = locked { () -> Message in
            let original = recorder.currentResponse
            var changes = recorder.changes ?? FlowChanges(rules: [])
            changes.edited = (changes.edited ?? []) + [.response]
            changes.originalResponse = original
            recorder.setChanges(changes, afterStart: true)
            let event = recorder.received(statusCode: response.status.code, headers: headers, mimeType: response.headerFields[.contentType])
            body.withUnsafeBytes { recorder.receivedBody($0) }
            return event
        }
        agent.emit(event)
    }

    func requestChunk(_ chunk: ArraySlice<UInt8>) {
        locked { chunk.withUnsafeBytes { requestBody.append($0) } }
    }

    func requestSent() {
        locked { recorder.markRequestSent() }
    }

    func responseChunk(_ chunk: ArraySlice<UInt8>) {
        locked { chunk.withUnsafeBytes { recorder.receivedBody($0) } }
    }

    func received(_ response: HTTPResponse) {
        let contentType = response.headerFields[.contentType]
        let mimeType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let headers = response.headerFields.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
        let event = locked { recorder.received(statusCode: response.status.code, headers: headers, mimeType: mimeType) }
        agent.emit(event)
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
            finish(state: .cancelled, error: FlowError(
                domain: "CaptureAgent", code: 0,
                message: "the app stopped reading the response body after \(bytes) bytes"
            ))
        }
    }

    func finish(error: Error?) {
        guard let error else { return finish(state: .completed, error: nil) }
        let cancelled = Task.isCancelled || Self.isCancellation(error)
        finish(state: cancelled ? .cancelled : .failed, error: Self.flowError(error))
    }

    private func finish(state: FlowState, error: FlowError?) {
        let message = locked { () -> Message? in
            guard !finished else { return nil }
            finished = true
            let body = requestBody.captured
            return recorder.finished(state: state, error: error, requestBody: body.size > 0 ? body : nil)
        }
        if let message { agent.emit(message) }
    }

    /// The error a transport or the runtime reported, its cause unwrapped.
    static func flowError(_ error: Error) -> FlowError {
        let cause = (error as? ClientError)?.underlyingError ?? error
        let nsError = cause as NSError
        if nsError.domain == NSURLErrorDomain {
            return FlowError(domain: NSURLErrorDomain, code: nsError.code, message: nsError.localizedDescription)
        }
        let type = String(reflecting: Swift.type(of: cause))
        let domain = type.split(separator: ".").first.map(String.init) ?? type
        return FlowError(domain: domain, code: 0, message: String(describing: cause))
    }

    static func isCancellation(_ error: Error) -> Bool {
        let cause = (error as? ClientError)?.underlyingError ?? error
        if cause is CancellationError { return true }
        let nsError = cause as NSError
        return nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled
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

/// A process-wide counter for client and flow numbers.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int

    init(start: Int) {
        value = start
    }

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        defer { value += 1 }
        return value
    }
}
