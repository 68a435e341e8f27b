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
/// framework's middleware: its ``ControlledFlow`` decides, records what it
/// decided and waits where it holds; this says it in a middleware's terms. The middleware carries the outcome out
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
    /// How a stopped inbound flow ends: its client was answered 503.
    private static let ends = ControlledFlow.HoldEnds(killed: .cancelled(.killedInbound), cancelled: .cancelled(.killedInbound))

    /// Starts the flow under the viewer's control, the rules applied, with
    /// a map-local rule's answer when one gives it. A service answers its
    /// own requests, so map-remote rules do not apply to them (ControlPowers.swift).
    static func start(_ start: FlowStart, agent: CaptureAgent) -> (ControlledFlow, ExchangeResponse?) {
        var policy = agent.controlPolicy
        guard let url = URL(string: start.url) else {
            return (ControlledFlow(recording: FlowRecording(agent: agent, start: start), agent: agent, policy: .none), nil)
        }
        policy.rules = policy.rules.excluding(.mapRemote)
        let request = ExchangeRequest(method: start.method, url: url, headers: start.headers, bodyStreams: true, direction: .inbound)
        let (flow, action) = ControlledFlow.start(request, as: start, agent: agent, policy: policy, ends: ends)
        switch action {
        case .answer(let response): return (flow, response)
        // A middleware cannot drop its client's connection: a condition's
        // failure is answered as a kill is.
        case .fail: return (flow, .killedInbound)
        case .send: return (flow, nil)
        }
    }

    /// Whether the viewer may change or hold this exchange: only then does
    /// the middleware ask ``decideRequest(body:)`` and ``decideResponse(_:)``.
    package var isControlled: Bool { controlled.isControlled }

    /// Whether a request breakpoint may hold the request: the middleware
    /// reads a body of at most ``holdLimit`` bytes first, so the person
    /// sees and can edit it.
    package var mayHoldRequest: Bool { controlled.intercepts }

    /// The most body a breakpoint holds back, request or response.
    package var holdLimit: Int { controlled.holdLimit }

    /// Decides the request before the handler runs: a map-local answer, a
    /// breakpoint (held until the viewer, the timeout or the viewer's
    /// departure ends it), or the handler with the request as the rules and
    /// the person left it. `body`: the whole request body when the
    /// middleware read it first (recorded here); nil when it could not, and
    /// then the request is not held (the person could not see its body).
    package func decideRequest(body: Data?) async -> InboundAction {
        guard controlled.isControlled else { return .handle(nil) }
        if let body {
            flow.wholeRequestBody(body)
            flow.update { recorder in
                if !body.isEmpty { recorder.setRequestBody(recorder.capped(body)) }
            }
            flow.requestEnded()
        }
        var hold = localAnswer == nil && controlled.requestReady() == .hold
        if hold && body == nil {
            _ = controlled.requestDecided(.resume(nil))
            hold = false
        }
        let changed = controlled.changes == nil ? nil : controlled.request.map { Self.withBody($0, body) }
        // A network condition's latency: the response starts that much later
        // (a cancelled request stops waiting).
        let latency = controlled.effect.latency
        if latency > .zero { try? await Task.sleep(for: latency) }
        if let answer = localAnswer {
            answerLocally(answer)
            return .answer(answer)
        }
        guard hold else { return .handle(changed) }
        // The viewer shows the held request with the body read for it.
        if body?.isEmpty == false { flow.restart() }
        switch await controlled.holdRequest() {
        case .kill, .cancelled:
            return .answer(.killedInbound)
        case .send(let request, let edited):
            return .handle(edited ? Self.withBody(request, body) : changed)
        }
    }

    /// The handler answered with this head: records it (`flowResponse`) and
    /// says whether a response breakpoint wants it held. If so, the
    /// middleware reads the body whole (at most ``holdLimit`` bytes) and
    /// asks ``decideResponse(_:)``, or, when it cannot, calls
    /// ``deliverUnheld()`` and streams it as usual.
    package func respondedMayHold(statusCode: Int, headers: [HTTPHeader]) -> Bool {
        responded(statusCode: statusCode, headers: headers)
        return controlled.responseArrived() == .hold
    }

    /// A held response's body could not be read whole (too long, or of
    /// unknown length): it goes to the client unheld.
    package func deliverUnheld() {
        controlled.bodyOutgrewHold()
    }

    /// Holds the handler's whole response for the viewer; returns what the
    /// client gets (the same, a person's edit, or the answer to a kill).
    /// The flow is finished here: the middleware writes the answer as it is.
    package func decideResponse(_ held: ExchangeResponse) async -> ExchangeResponse {
        held.body.withUnsafeBytes { flow.responseBody($0) }
        switch await controlled.holdResponse(held) {
        case .kill, .cancelled:
            return .killedInbound
        case .deliver(let delivered, _):
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
