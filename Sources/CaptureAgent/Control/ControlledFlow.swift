import Foundation
import WireProtocol

/// One flow and the viewer's control of it, together: the recording
/// (``FlowRecording``) and the decisions (``ExchangeControl``), so an
/// adapter only translates its client's types and does its I/O. What a
/// decision means for the log (the request a rule or a person changed, an
/// edited response, a kill) is recorded here, the same for every client.
///
/// A value with two references: copies share the flow. An app that did not
/// opt in to control, or a viewer asking for nothing, costs no control
/// state (``isControlled`` is false and every decision is "go on").
///
/// The flow's lock is always taken before the control's: a breakpoint's
/// filter reads the log.
///
/// ```swift
/// let (flow, action) = ControlledFlow.start(request, as: start, agent: agent)
/// switch action {
/// case .answer(let response): flow.recording.answered(with: response)   // map local
/// case .fail(let failure): flow.recording.finish(.failed(…))
/// case .send(let sent):
///     if flow.requestReady() == .hold, case .send(let edited, _) = await flow.holdRequest() { … }
/// }
/// ```
package struct ControlledFlow: Sendable {
    package let recording: FlowRecording
    private let agent: CaptureAgent
    private let control: Locked<ExchangeControl>?

    /// How a flow ends when the viewer stops it at a hold: killed, or the
    /// app's task cancelled while it waited; and whether a person's edit
    /// applies (an adapter that builds no edits says so, and a resume with
    /// one goes on unedited, so the log never claims a change not made).
    package struct HoldEnds: Sendable {
        package var killed: FlowEnd
        package var cancelled: FlowEnd
        /// False: the adapter ends a stopped flow itself (a gRPC call's end carries its status).
        package var endsFlow = true
        package var takesEdits = true

        package init(killed: FlowEnd = .killed, cancelled: FlowEnd = .taskCancelled) {
            self.killed = killed
            self.cancelled = cancelled
        }

        /// Holds for an adapter that ends its flows itself and builds no edits.
        package static let onlyHolds: HoldEnds = {
            var ends = HoldEnds()
            ends.endsFlow = false
            ends.takesEdits = false
            return ends
        }()

        func taking(_ decision: Breakpoints.Decision) -> Breakpoints.Decision {
            if !takesEdits, case .resume = decision { return .resume(nil) }
            return decision
        }
    }

    private let ends: HoldEnds

    /// A flow already recording (its adapter saw the request before it could
    /// decide, as AsyncHTTPClient's channel does), under `policy`; decide
    /// its start with ``decide(_:)``.
    package init(recording: FlowRecording, agent: CaptureAgent, policy: ExchangeControl.Policy, ends: HoldEnds = HoldEnds()) {
        self.init(recording: recording, agent: agent, control: policy.canChange ? ExchangeControl(policy: policy) : nil, ends: ends)
    }

    /// A start decided before the flow's recording is built (URLSession's
    /// adapter chooses its capture path by it), handed to the flow with
    /// ``ControlledFlow/init(recording:agent:decided:ends:)``.
    package struct Decision: Sendable {
        fileprivate var control: ExchangeControl
        /// What the decision said; nil when nothing could change the request.
        package let action: ExchangeControl.StartAction?

        /// Nothing decided: an app that did not opt in, a download task.
        package static let none = Decision(control: ExchangeControl(policy: .none), action: nil)

        package var changes: FlowChanges? { control.changes }
        /// The request as it goes out, rules applied; nil when undecided.
        package var request: ExchangeRequest? { control.request }
        package var effect: NetworkEffect { control.effect }
        package var canChange: Bool { control.policy.canChange }
        package var intercepts: Bool { control.policy.intercepts }

        /// The flow is a viewer's replay of `origin`: the change record says so.
        package mutating func isReplay(of origin: ReplayOrigin) {
            control.isReplay(of: origin)
        }
    }

    /// Decides `request` (nil: a request the control core cannot describe)
    /// under `policy`, before the flow exists.
    package static func decide(_ request: ExchangeRequest?, agent: CaptureAgent, policy: ExchangeControl.Policy) -> Decision {
        var control = ExchangeControl(policy: policy)
        guard policy.canChange, let request else { return Decision(control: control, action: nil) }
        let action = control.start(request, inputs: .init(agent: agent))
        return Decision(control: control, action: action)
    }

    /// A flow whose start its adapter decided before it built the recording.
    package init(recording: FlowRecording, agent: CaptureAgent, decided: Decision, ends: HoldEnds = HoldEnds()) {
        self.init(recording: recording, agent: agent, control: decided.canChange ? decided.control : nil, ends: ends)
    }

    private init(recording: FlowRecording, agent: CaptureAgent, control: ExchangeControl?, ends: HoldEnds) {
        self.recording = recording
        self.agent = agent
        self.control = control.map(Locked.init)
        self.ends = ends
    }

    /// Decides the app's request, then starts its flow as `start` describes
    /// it (evaluated only for a flow that is built), with the request the
    /// decision sends and what it changed. A
    /// controlled flow is built even with no inspector: its control needs
    /// the log. `policy`: the agent's by default; `origin`: the flow a
    /// viewer's replay repeats.
    package static func start(_ app: ExchangeRequest, as start: @autoclosure () -> FlowStart, agent: CaptureAgent,
                              policy: ExchangeControl.Policy? = nil, origin: ReplayOrigin? = nil,
                              configuration: CaptureAgent.Configuration? = nil,
                              ends: HoldEnds = HoldEnds()) -> (flow: ControlledFlow, action: ExchangeControl.StartAction) {
        let policy = policy ?? agent.controlPolicy
        var action = ExchangeControl.StartAction.send(app)
        var control: ExchangeControl?
        if policy.canChange || origin != nil {
            var decided = ExchangeControl(policy: policy)
            if policy.canChange { action = decided.start(app, inputs: .init(agent: agent)) }
            if let origin { decided.isReplay(of: origin) }
            control = decided
        }
        let recording = FlowRecording(agent: agent, building: policy.canChange,
                                      start: start().sending(control?.request, changes: control?.changes),
                                      configuration: configuration)
        return (ControlledFlow(recording: recording, agent: agent, control: policy.canChange ? control : nil, ends: ends), action)
    }

    package var id: FlowID { recording.id }

    /// Whether the viewer may change or hold this flow at all.
    package var isControlled: Bool { control != nil }

    /// What a network condition asks of the exchange, once started.
    package var effect: NetworkEffect { control?.withLock { $0.effect } ?? .none }

    /// What the log says was changed; nil while nothing was.
    package var changes: FlowChanges? { control?.withLock { $0.changes } }

    /// The request as it goes out (rules and edits applied); nil before the start.
    package var request: ExchangeRequest? { control?.withLock { $0.request } }

    /// Whether the viewer asks for breakpoints now.
    package var intercepts: Bool { control?.withLock { $0.policy.intercepts } ?? false }

    /// Whether a server replay is in force (it may need the body to match).
    package var replays: Bool { control?.withLock { $0.policy.replays } ?? false }

    /// The most body a breakpoint holds back, request or response.
    package var holdLimit: Int { control?.withLock { $0.holdLimit } ?? 0 }

    /// Whether a response is held now.
    package var isHoldingResponse: Bool { control?.withLock { $0.isHoldingResponse } ?? false }

    // MARK: - Start

    /// Decides the request of a flow already recording; the log shows what
    /// the rules changed (the flow starts again with it).
    package func decide(_ request: ExchangeRequest) -> ExchangeControl.StartAction {
        guard let control else { return .send(request) }
        let (action, changes, sent) = control.withLock { control in
            (control.start(request, inputs: .init(agent: agent)), control.changes, control.request)
        }
        guard let changes else { return action }
        recording.update { recorder in
            if let sent, sent != request {
                recorder.replaceRequest(method: sent.method, url: sent.url, headers: sent.headers, body: nil)
            }
            recorder.setChanges(changes)
        }
        recording.restart()
        return action
    }

    /// Waits `duration` on the calling task (a condition's latency before a
    /// local answer or a failure); a cancelled task ends the flow as
    /// cancelled, and the cancellation is thrown.
    package func wait(_ duration: Duration) async throws {
        guard duration > .zero else { return }
        do {
            try await Task.sleep(for: duration)
        } catch {
            recording.finish(.thrown(error))
            throw error
        }
    }

    // MARK: - Request

    /// The request is about to go out, whole (the body the adapter read to
    /// hold it recorded already): whether a breakpoint holds it.
    package func requestReady() -> ExchangeControl.RequestAction {
        guard let control else { return .send }
        return recording.withLog { log in control.withLock { $0.requestReady(log()) } } ?? .send
    }

    /// Holds the request for the viewer (without blocking a thread; the
    /// task's cancellation ends the hold) and records what was decided.
    package func holdRequest() async -> ExchangeControl.RequestRelease {
        requestDecided(await agent.hold(id, phase: .request))
    }

    /// Holds the request and calls `decided` (on an arbitrary thread) with
    /// what was decided, recorded: for an adapter on an event loop.
    package func holdRequest(decided: @escaping @Sendable (ExchangeControl.RequestRelease) -> Void) {
        agent.hold(id, phase: .request) { decision in decided(self.requestDecided(decision)) }
    }

    /// What the viewer decided for the held request: an edit is recorded
    /// (the flow starts again with it), a kill or a cancellation ends the flow.
    package func requestDecided(_ decision: Breakpoints.Decision) -> ExchangeControl.RequestRelease {
        guard let control else { return .cancelled }
        let (release, changes) = control.withLock { ($0.requestDecided(ends.taking(decision)), $0.changes) }
        switch release {
        case .kill: if ends.endsFlow { recording.finish(ends.killed) }
        case .cancelled: if ends.endsFlow { recording.finish(ends.cancelled) }
        case .send(let request, let edited): if edited { recordEdit(request, changes: changes) }
        }
        return release
    }

    /// A person edited the held request: the log shows what is sent instead.
    private func recordEdit(_ request: ExchangeRequest, changes: FlowChanges?) {
        guard recording.isBuilt else { return }
        if !request.bodyStreams { recording.wholeRequestBody(request.body ?? Data()) }
        recording.update { recorder in
            var body = recorder.log.request.body
            if !request.bodyStreams {
                let data = request.body ?? Data()
                body = data.isEmpty ? nil : recorder.capped(data)
            }
            recorder.replaceRequest(method: request.method, url: request.url, headers: request.headers, body: body)
            if let changes { recorder.setChanges(changes) }
        }
        recording.restart()
    }

    // MARK: - Response

    /// A response head came (the flow has recorded it): whether a breakpoint holds it.
    package func responseArrived() -> ExchangeControl.ResponseAction {
        guard let control else { return .deliver }
        return recording.withLog { log in control.withLock { $0.responseArrived(log()) } } ?? .deliver
    }

    /// The held body grew past ``holdLimit``: the response goes on unheld.
    package func bodyOutgrewHold() {
        control?.withLock { $0.bodyOutgrewHold() }
    }

    /// Holds `held` (the whole response, its body recorded already) for the
    /// viewer, and records what was decided.
    package func holdResponse(_ held: ExchangeResponse) async -> ExchangeControl.ResponseRelease {
        let original = recording.log?.response
        return responseDecided(await agent.hold(id, phase: .response, response: original), held: held, original: original)
    }

    /// ``holdResponse(_:)`` for an adapter on an event loop: `decided` runs on an arbitrary thread.
    package func holdResponse(_ held: ExchangeResponse, decided: @escaping @Sendable (ExchangeControl.ResponseRelease) -> Void) {
        let original = recording.log?.response
        agent.hold(id, phase: .response, response: original) { decision in
            decided(self.responseDecided(decision, held: held, original: original))
        }
    }

    /// What the viewer decided for the held response: an edit is recorded
    /// (the log shows what the app gets, and what the server had answered),
    /// a kill or a cancellation ends the flow. A delivered response's flow
    /// is the adapter's to end, once the app has it.
    private func responseDecided(_ decision: Breakpoints.Decision, held: ExchangeResponse,
                                 original: Response?) -> ExchangeControl.ResponseRelease {
        guard let control else { return .deliver(held, edited: false) }
        let (release, changes) = control.withLock {
            ($0.responseDecided(ends.taking(decision), held: held, original: original), $0.changes)
        }
        switch release {
        case .kill: if ends.endsFlow { recording.finish(ends.killed) }
        case .cancelled: if ends.endsFlow { recording.finish(ends.cancelled) }
        case .deliver(let response, let edited):
            guard edited else { break }
            recording.update { recorder in
                recorder.replaceResponse(statusCode: response.statusCode, headers: response.headers,
                                         mimeType: MediaType.essence(of: response.headers.first("Content-Type")), body: response.body)
                if let changes { recorder.setChanges(changes, afterStart: true) }
            }
        }
        return release
    }
}

extension ExchangeControl.StartInputs {
    /// What the agent's stores answer: server replay's recorded responses,
    /// and each condition rule's own generator.
    package init(agent: CaptureAgent) {
        self.init(replay: { agent.serverReplay.answer(for: $0) }, draw: { $0.draws.next() })
    }
}
