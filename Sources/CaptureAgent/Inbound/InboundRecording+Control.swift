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
        switch control.start(request) {
        case .answer(let response): return (control, response)
        // A middleware cannot drop its client's connection: a condition's
        // failure is answered as a kill is.
        case .fail: return (control, .killedInbound)
        case .send: return (control, nil)
        }
    }

    /// Whether the viewer may change or hold this exchange: only then does
    /// the middleware ask ``decideRequest(body:)`` and ``decideResponse(_:)``.
    package var isControlled: Bool { control != nil }

    /// Whether a request breakpoint may hold the request: the middleware
    /// reads a body of at most ``holdLimit`` bytes first, so the person
    /// sees and can edit it.
    package var mayHoldRequest: Bool { control?.withLock { $0.control.policy.intercepts } ?? false }

    /// The most body a breakpoint holds back, request or response.
    package var holdLimit: Int { control?.withLock { $0.control.holdLimit } ?? 0 }

    /// Decides the request before the handler runs: a map-local answer, a
    /// breakpoint (held until the viewer, the timeout or the viewer's
    /// departure ends it), or the handler with the request as the rules and
    /// the person left it. `body`: the whole request body when the
    /// middleware read it first (recorded here); nil when it could not, and
    /// then the request is not held (the person could not see its body).
    package func decideRequest(body: Data?) async -> InboundAction {
        guard let control else { return .handle(nil) }
        if let body {
            flow.wholeRequestBody(body)
            flow.update { recorder in
                if !body.isEmpty { recorder.setRequestBody(recorder.capped(body)) }
            }
            flow.requestEnded()
        }
        // The flow's lock, then the control's: a breakpoint's filter reads the log.
        let asked = flow.withLog { log in
            control.withLock { state -> (answer: ExchangeResponse?, hold: Bool, changed: ExchangeRequest?) in
                if let answer = state.localAnswer { return (answer, false, nil) }
                var hold = state.control.requestReady(log()) == .hold
                if hold && body == nil {
                    _ = state.control.requestDecided(.resume(nil))
                    hold = false
                }
                return (nil, hold, state.control.changes == nil ? nil : state.control.request.map { Self.withBody($0, body) })
            }
        }
        guard let first = asked else { return .handle(nil) }
        // A network condition's latency: the response starts that much later
        // (a cancelled request stops waiting).
        let latency = control.withLock { $0.control.effect.latency }
        if latency > .zero { try? await Task.sleep(for: latency) }
        if let answer = first.answer {
            answerLocally(answer)
            return .answer(answer)
        }
        guard first.hold else { return .handle(first.changed) }
        // The viewer shows the held request with the body read for it.
        if body?.isEmpty == false { flow.restart() }
        let decision = await agent.hold(id, phase: .request)
        let decided = control.withLock { state in (state.control.requestDecided(decision), state.control.changes) }
        switch decided.0 {
        case .kill, .cancelled:
            finished(error: .killedInbound, state: .cancelled)
            return .answer(.killedInbound)
        case .send(let request, let edited):
            guard edited else { return .handle(first.changed) }
            let sent = Self.withBody(request, body)
            flow.wholeRequestBody(sent.body ?? Data())
            flow.update { recorder in
                recorder.replaceRequest(method: sent.method, url: sent.url, headers: sent.headers, body: sent.body.map(recorder.capped))
                if let changes = decided.1 { recorder.setChanges(changes) }
            }
            flow.restart()
            return .handle(sent)
        }
    }

    /// The handler answered with this head: records it (`flowResponse`) and
    /// says whether a response breakpoint wants it held. If so, the
    /// middleware reads the body whole (at most ``holdLimit`` bytes) and
    /// asks ``decideResponse(_:)``, or, when it cannot, calls
    /// ``deliverUnheld()`` and streams it as usual.
    package func respondedMayHold(statusCode: Int, headers: [HTTPHeader]) -> Bool {
        responded(statusCode: statusCode, headers: headers)
        guard let control else { return false }
        return flow.withLog { log in control.withLock { $0.control.responseArrived(log()) == .hold } } ?? false
    }

    /// A held response's body could not be read whole (too long, or of
    /// unknown length): it goes to the client unheld.
    package func deliverUnheld() {
        control?.withLock { $0.control.bodyOutgrewHold() }
    }

    /// Holds the handler's whole response for the viewer; returns what the
    /// client gets (the same, a person's edit, or the answer to a kill).
    /// The flow is finished here: the middleware writes the answer as it is.
    package func decideResponse(_ held: ExchangeResponse) async -> ExchangeResponse {
        held.body.withUnsafeBytes { flow.responseBody($0) }
        let recorded = flow.log?.response
        let decision = await agent.hold(id, phase: .response, response: recorded)
        guard let control else {
            finished()
            return held
        }
        let decided = control.withLock { state in (state.control.responseDecided(decision, held: held, original: recorded), state.control.changes) }
        switch decided.0 {
        case .kill, .cancelled:
            finished(error: .killedInbound, state: .cancelled)
            return .killedInbound
        case .deliver(let delivered, let edited):
            if edited {
                flow.update { recorder in
                    recorder.replaceResponse(statusCode: delivered.statusCode, headers: delivered.headers,
                                             mimeType: mimeType(of: delivered.headers.first("Content-Type")), body: delivered.body)
                    if let changes = decided.1 { recorder.setChanges(changes, afterStart: true) }
                }
            }
            finished()
            return delivered
        }
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
