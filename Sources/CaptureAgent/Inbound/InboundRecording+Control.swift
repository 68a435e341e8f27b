import Foundation
import WireProtocol

/// What a server framework does with a request it received, as the viewer's
/// control decided (only for an app that allows control).
package enum InboundAction: Sendable, Equatable {
    /// Run the handler: with the request as it came (nil), or with this one
    /// (a header rule, a person's edit at a breakpoint).
    case handle(ExchangeRequest?)
    /// Do not run the handler; answer the client with this (a map-local
    /// rule, or a kill). The flow is recorded and finished already.
    case answer(ExchangeResponse)
}

/// The viewer's control over a received request, for every server
/// framework's middleware: ``ExchangeControl`` decides, this records what it
/// decided and waits where it holds. The middleware carries the outcome out
/// in its framework's terms:
///
/// ```swift
/// if flow.isControlled {
///     let body = flow.mayHoldRequest ? try await wholeBody(limit: flow.holdLimit) : nil
///     switch await flow.decideRequest(body: body) {
///     case .answer(let response): return frameworkResponse(response)
///     case .handle(let changed): if let changed { request = frameworkRequest(changed) }
///     }
/// }
/// ```
extension InboundRecording {
    /// The control an inbound exchange starts with, the rules applied, and
    /// a map-local rule's answer when one gives it: nil (nothing to decide)
    /// unless the app allows control and the viewer has rules or breakpoints
    /// now. A service answers its own requests, so map-remote rules do not
    /// apply to them (ControlPowers.swift).
    static func startControl(of agent: CaptureAgent, method: String, url: String,
                             headers: [HTTPHeader]) -> (control: ExchangeControl, answer: ExchangeResponse?)? {
        var policy = agent.controlPolicy
        guard policy.canChange, let url = URL(string: url) else { return nil }
        policy.rules = policy.rules.excluding(.mapRemote)
        var control = ExchangeControl(policy: policy)
        let request = ExchangeRequest(method: method, url: url, headers: headers, bodyStreams: true, direction: .inbound)
        guard case .answer(let response) = control.start(request) else { return (control, nil) }
        return (control, response)
    }

    /// Whether the viewer may change or hold this exchange: only then does
    /// the middleware ask ``decideRequest(body:)`` and ``decideResponse(_:)``.
    package var isControlled: Bool { state.withLock { $0.control != nil } }

    /// Whether a request breakpoint may hold the request: the middleware
    /// reads a body of at most ``holdLimit`` bytes first, so the person
    /// sees and can edit it.
    package var mayHoldRequest: Bool { state.withLock { $0.control?.policy.intercepts ?? false } }

    /// The most body a breakpoint holds back, request or response.
    package var holdLimit: Int { state.withLock { $0.control?.holdLimit ?? 0 } }

    /// Decides the request before the handler runs: a map-local answer, a
    /// breakpoint (held until the viewer, the timeout or the viewer's
    /// departure ends it), or the handler with the request as the rules and
    /// the person left it. `body`: the whole request body when the
    /// middleware read it first (recorded here); nil when it could not, and
    /// then the request is not held (the person could not see its body).
    package func decideRequest(body: Data?) async -> InboundAction {
        let first = state.withLock { state -> (answer: ExchangeResponse?, hold: Bool, changed: ExchangeRequest?) in
            guard var control = state.control, var recorder = state.recorder else { return (nil, false, nil) }
            defer { state.control = control; state.recorder = recorder }
            if let body {
                state.requestBody.append(body)
                if !body.isEmpty { recorder.setRequestBody(recorder.capped(body)) }
                state.requestBodyReadAhead = true
                state.requestEnded = true
                recorder.markRequestSent()
            }
            if let answer = state.localAnswer { return (answer, false, nil) }
            var hold = control.requestReady(recorder.log) == .hold
            if hold && body == nil {
                _ = control.requestDecided(.resume(nil))
                hold = false
            }
            return (nil, hold, control.changes == nil ? nil : control.request.map { Self.withBody($0, body) })
        }
        if let answer = first.answer {
            answerLocally(answer)
            return .answer(answer)
        }
        guard first.hold else { return .handle(first.changed) }
        // The viewer shows the held request with the body read for it.
        if body?.isEmpty == false, let started = state.withLock({ $0.recorder?.started() }) { agent.emit(started) }
        let decision = await agent.hold(id, phase: .request)
        let outcome = state.withLock { state -> (action: InboundAction, started: Message?) in
            guard var control = state.control, var recorder = state.recorder else { return (.handle(nil), nil) }
            defer { state.control = control; state.recorder = recorder }
            switch control.requestDecided(decision) {
            case .kill, .cancelled:
                return (.answer(.killedInbound), nil)
            case .send(let request, let edited):
                guard edited else { return (.handle(first.changed), nil) }
                let sent = Self.withBody(request, body)
                state.requestBody = BodyCapture(limit: recorder.configuration.bodyCaptureLimit)
                if let data = sent.body { state.requestBody.append(data) }
                recorder.replaceRequest(method: sent.method, url: sent.url, headers: sent.headers,
                                        body: sent.body.map(recorder.capped))
                if let changes = control.changes { recorder.setChanges(changes) }
                return (.handle(sent), recorder.started())
            }
        }
        if let started = outcome.started { agent.emit(started) }
        if case .answer = outcome.action { finished(error: .killedInbound, state: .cancelled) }
        return outcome.action
    }

    /// The handler answered with this head: records it (`flowResponse`) and
    /// says whether a response breakpoint wants it held. If so, the
    /// middleware reads the body whole (at most ``holdLimit`` bytes) and
    /// asks ``decideResponse(_:)``, or, when it cannot, calls
    /// ``deliverUnheld()`` and streams it as usual.
    package func respondedMayHold(statusCode: Int, headers: [HTTPHeader]) -> Bool {
        responded(statusCode: statusCode, headers: headers)
        return state.withLock { state in
            guard var control = state.control, let recorder = state.recorder else { return false }
            defer { state.control = control }
            return control.responseArrived(recorder.log) == .hold
        }
    }

    /// A held response's body could not be read whole (too long, or of
    /// unknown length): it goes to the client unheld.
    package func deliverUnheld() {
        state.withLock { $0.control?.bodyOutgrewHold() }
    }

    /// Holds the handler's whole response for the viewer; returns what the
    /// client gets (the same, a person's edit, or the answer to a kill).
    /// The flow is finished here: the middleware writes the answer as it is.
    package func decideResponse(_ held: ExchangeResponse) async -> ExchangeResponse {
        let recorded = state.withLock { state -> Response? in
            held.body.withUnsafeBytes { bytes in state.recorder?.receivedBody(bytes) }
            return state.recorder?.currentResponse
        }
        let decision = await agent.hold(id, phase: .response, response: recorded)
        let outcome = state.withLock { state -> (answer: ExchangeResponse, killed: Bool) in
            guard var control = state.control, var recorder = state.recorder else { return (held, false) }
            defer { state.control = control; state.recorder = recorder }
            switch control.responseDecided(decision, held: held, original: recorded) {
            case .kill, .cancelled:
                return (.killedInbound, true)
            case .deliver(let delivered, let edited):
                if edited {
                    recorder.replaceResponse(statusCode: delivered.statusCode, headers: delivered.headers,
                                             mimeType: mimeType(of: delivered.headers.first("Content-Type")), body: delivered.body)
                    if let changes = control.changes { recorder.setChanges(changes, afterStart: true) }
                }
                return (delivered, false)
            }
        }
        finished(error: outcome.killed ? .killedInbound : nil, state: outcome.killed ? .cancelled : nil)
        return outcome.answer
    }

    /// A map-local rule answered: the log shows the answer and the flow ends.
    private func answerLocally(_ answer: ExchangeResponse) {
        responded(statusCode: answer.statusCode, headers: answer.headers)
        answer.body.withUnsafeBytes { responseBody($0) }
        finished()
    }

    private static func withBody(_ request: ExchangeRequest, _ body: Data?) -> ExchangeRequest {
        guard request.bodyStreams, let body else { return request }
        var whole = request
        whole.body = body
        whole.bodyStreams = false
        return whole
    }
}

extension ExchangeResponse {
    /// What the client of a service gets when a person kills its request or
    /// response at a breakpoint: a middleware cannot drop the connection, so
    /// the service refuses the request, with nothing from the handler.
    package static let killedInbound = ExchangeResponse(
        statusCode: 503, headers: [HTTPHeader(name: "Content-Length", value: "0")], body: Data())
}

extension FlowError {
    /// What an inbound flow a person killed at a breakpoint ends with.
    package static let killedInbound = FlowError(
        domain: "netinspect.inbound", code: 3,
        message: "killed at a breakpoint: the client was answered 503 and the handler's work dropped")
}
