import FlowFilter
import Foundation
import WireProtocol

/// Every decision a viewer's control makes about one exchange, for every
/// capture adapter: traffic rules, breakpoints on the request and the
/// response and their edits, kill, and the change record the log shows.
///
/// It does no I/O, never waits and holds no lock: what the agent's locked
/// stores answer (server replay's recorded response, a condition's draw)
/// comes in as ``StartInputs``. ``ControlledFlow`` feeds it events in order
/// and carries out, with the flow's recording, the action each returns (the
/// shape of swift-nio's `…StateMachine` beside its handler):
///
/// ```swift
/// var control = ExchangeControl(policy: agent.controlPolicy)
/// switch control.start(request, inputs: StartInputs(agent: agent)) {
/// case .answer(let response): …            // map local: no network
/// case .send(let request):
///     if control.requestReady(recorder.log) == .hold { … agent.hold(…) { control.requestDecided($0) } }
/// }
/// ```
///
/// Waiting (a hold) is the adapter's: ``CaptureAgent/hold(_:phase:response:decide:)``
/// sends `held`, waits without blocking a thread and sends `released`.
package struct ExchangeControl: Sendable {
    /// What the viewer asked for: the rules as the exchange started (a rule
    /// that changes mid-flight never half-applies), and the breakpoints as
    /// they are at each step (a viewer that went away holds nothing more).
    package struct Policy: Sendable {
        package var rules: RuleSet
        /// The viewer's breakpoints; nil holds nothing.
        package var breakpoints: Breakpoints?
        /// The value the log shows for a redacted field: an edit that
        /// leaves it keeps the app's own value.
        package var redactionMarker: String
        /// The most of a response body a breakpoint holds back.
        package var holdLimit: Int
        /// Whether a server replay is in force: an outbound request asks
        /// ``StartInputs/replay`` for its recorded response.
        package var replays: Bool

        package init(rules: RuleSet, breakpoints: Breakpoints?, redactionMarker: String, holdLimit: Int,
                     replays: Bool = false) {
            self.rules = rules
            self.breakpoints = breakpoints
            self.redactionMarker = redactionMarker
            self.holdLimit = holdLimit
            self.replays = replays
        }

        /// An app that did not opt in: nothing is ever changed or held.
        package static let none = Policy(rules: .empty, breakpoints: nil, redactionMarker: "", holdLimit: 0)

        /// Whether anything at all can change this exchange, now.
        package var canChange: Bool { !rules.isEmpty || intercepts || replays }

        /// Whether the viewer asks for breakpoints now.
        package var intercepts: Bool { breakpoints?.isActive ?? false }
    }

    private enum State {
        case idle
        case started
        case requestHeld
        case sent
        case responseHeld
        case done
    }

    package let policy: Policy
    private var state = State.idle
    /// The request as the app made it.
    package private(set) var appRequest: ExchangeRequest?
    /// The request as it goes out (rules and edits applied).
    package private(set) var request: ExchangeRequest?
    /// What the log says was changed; nil while nothing was.
    package private(set) var changes: FlowChanges?
    /// What a network condition asks of the exchange after ``start(_:)``:
    /// the wait before the response (or the answer, or the failure), the pace of the bodies.
    package private(set) var effect = NetworkEffect.none

    package init(policy: Policy) {
        self.policy = policy
    }

    // MARK: - Request

    /// What to do with the app's request first.
    package enum StartAction: Sendable, Equatable {
        /// Send this (the app's own, or as the rules changed it); next ``requestReady(_:)``.
        case send(ExchangeRequest)
        /// Answer the app with this, without the network (map local); the exchange is done.
        case answer(ExchangeResponse)
        /// Fail the app's request as its client reports this, without the
        /// network (a network condition); the exchange is done.
        case fail(NetworkFailure)
    }

    /// What the agent's locked stores answer for one exchange, asked only
    /// when the decision needs them; their owner (``ControlledFlow``) gives
    /// them, so the decisions themselves stay plain values a table test covers.
    package struct StartInputs {
        /// Server replay's answer for the request as it would go out (the
        /// store takes it: each recorded response answers once); nil: none.
        package var replay: (ExchangeRequest) -> ServerReplayStore.Answer?
        /// The next draw, in [0, 1), of the generator of the condition that matched.
        package var draw: (ConditionMatch) -> Double

        package init(replay: @escaping (ExchangeRequest) -> ServerReplayStore.Answer? = { _ in nil },
                     draw: @escaping (ConditionMatch) -> Double = { _ in 1 }) {
            self.replay = replay
            self.draw = draw
        }
    }

    /// The app made `request`: the rules decide first, then server replay
    /// answers what they would send, when it has a recorded response (the
    /// request as it would go out is the one a recording under the same
    /// rules holds); then a network condition may fail it or slow it (``effect``).
    package mutating func start(_ request: ExchangeRequest, inputs: StartInputs = StartInputs()) -> StartAction {
        let action = startByRules(request, inputs: inputs)
        guard let match = policy.rules.condition(for: request) else { return action }
        // A condition that cannot fail does not advance its generator.
        let (effect, failure, applied) = match.decide(draw: match.condition.failure == nil ? 1 : inputs.draw(match))
        guard failure != nil || !effect.isNone else { return action }
        // Added to a server replay's recorded wait, when it keeps one.
        let replayWait = self.effect.latency
        self.effect = effect
        self.effect.latency += replayWait
        var record = changes ?? FlowChanges(rules: [])
        record.rules.append(match.rule.description)
        record.condition = applied
        changes = record
        guard let failure else { return action }
        state = .done
        return Self.action(failing: failure)
    }

    private mutating func startByRules(_ request: ExchangeRequest, inputs: StartInputs) -> StartAction {
        precondition(state == .idle, "an exchange starts once")
        appRequest = request
        var sent = request
        switch policy.rules.apply(to: request) {
        case .unchanged:
            break
        case .send(let changed, let applied):
            changes = applied
            sent = changed
        case .answer(let response, let changed, let applied):
            changes = applied
            self.request = changed
            state = .done
            return .answer(response)
        }
        self.request = sent
        if policy.replays, sent.direction == .outbound, let answer = inputs.replay(sent) {
            return replayed(answer)
        }
        state = .started
        return .send(sent)
    }

    /// Server replay answers the request: the change record says so.
    private mutating func replayed(_ answer: ServerReplayStore.Answer) -> StartAction {
        var record = changes ?? FlowChanges(rules: [])
        state = .done
        switch answer {
        case .recorded(let response, let mark, let wait):
            record.serverReplay = mark
            changes = record
            // `--server-replay-timing`: the adapters wait as for a condition's latency.
            if let wait, wait > 0 { effect.latency = .milliseconds(Int64((wait * 1000).rounded())) }
            return .answer(response)
        case .notFound(let response, let mark):
            record.serverReplay = mark
            changes = record
            return .answer(response)
        case .kill(let mark):
            record.serverReplay = mark
            changes = record
            return .fail(.reset)
        }
    }

    /// The exchange is a viewer's replay of `origin` (its adapter knew it
    /// by an object of its own); the change record says so.
    package mutating func isReplay(of origin: ReplayOrigin) {
        guard var record = changes else { return changes = origin.changes }
        if origin.composed {
            record.composed = true
        } else {
            record.replayOf = origin.id
            if origin.edited { record.edited = (record.edited ?? []) + [.request] }
        }
        changes = record
    }

    /// Whether to send now or hold for the viewer.
    package enum RequestAction: Sendable, Equatable {
        case send
        /// Tell the viewer (`held`) and wait; then ``requestDecided(_:)``.
        case hold
    }

    /// The request is about to go out; `log` is the flow as the viewer will see it.
    package mutating func requestReady(_ log: @autoclosure () -> NetworkLog) -> RequestAction {
        guard state == .started else { return .send }
        state = .sent
        guard let filter = policy.breakpoints?.filter, filter.matches(log()) else { return .send }
        state = .requestHeld
        return .hold
    }

    /// How a held request goes on.
    package enum RequestRelease: Sendable, Equatable {
        /// Send this; `edited`: a person changed it (the log is to show the new request).
        case send(ExchangeRequest, edited: Bool)
        /// The viewer killed it: end it as the client ends a cancelled request.
        case kill
        /// The app cancelled it while it was held: it is over, nothing to send.
        case cancelled
    }

    package mutating func requestDecided(_ decision: Breakpoints.Decision) -> RequestRelease {
        guard state == .requestHeld, let current = request, let app = appRequest else { return .cancelled }
        switch decision {
        case .kill:
            state = .done
            return .kill
        case .release(.cancelled):
            state = .done
            return .cancelled
        case .release, .resume(nil):
            state = .sent
            return .send(current, edited: false)
        case .resume(let resume?):
            state = .sent
            guard let edit = resume.request else { return .send(current, edited: false) }
            let edited = Self.applying(edit, to: current, marker: policy.redactionMarker)
            request = edited
            var record = changes ?? FlowChanges(rules: [])
            record.edited = [.request]
            if edited.url != app.url { record.originalURL = record.originalURL ?? app.url.absoluteString }
            if edited.sortedHeaders != app.sortedHeaders { record.originalHeaders = record.originalHeaders ?? app.sortedHeaders }
            if edited.method != app.method { record.originalMethod = record.originalMethod ?? app.method }
            if edited.body != app.body, record.originalBody == nil {
                // Kept as the app sent it, up to what a hold keeps, so the
                // viewer can say the body was edited even at the same size.
                record.originalBody = CapturedBody(capturing: app.body ?? Data(), cap: policy.holdLimit)
            }
            changes = record
            return .send(edited, edited: true)
        }
    }

    // MARK: - Response

    /// What to do with a response head that arrived.
    package enum ResponseAction: Sendable, Equatable {
        /// Pass it (and its body) on to the app as it comes.
        case deliver
        /// Keep it and its body from the app, up to ``holdLimit`` bytes; at
        /// its end, tell the viewer and wait, then ``responseDecided(_:held:original:)``.
        case hold
    }

    /// `log`: the flow with the response head recorded. A later head (a
    /// client's retry after an answered challenge) replaces a held one.
    package mutating func responseArrived(_ log: @autoclosure () -> NetworkLog) -> ResponseAction {
        guard state == .sent || state == .responseHeld else { return .deliver }
        state = .sent
        guard let filter = policy.breakpoints?.filter, filter.matches(log()) else { return .deliver }
        state = .responseHeld
        return .hold
    }

    /// The most body a held response keeps back; past it the adapter gives
    /// the app what it held and the rest as it comes (``bodyOutgrewHold()``),
    /// so a breakpoint never costs more memory than the capture.
    package var holdLimit: Int { policy.holdLimit }

    /// The held body grew past ``holdLimit``: the response is no longer held.
    package mutating func bodyOutgrewHold() {
        if state == .responseHeld { state = .sent }
    }

    /// Whether a response is held now (its end is what the viewer is told of).
    package var isHoldingResponse: Bool { state == .responseHeld }

    /// How a held response goes on.
    package enum ResponseRelease: Sendable, Equatable {
        /// Give the app this; `edited`: a person changed it.
        case deliver(ExchangeResponse, edited: Bool)
        case kill
        case cancelled
    }

    /// `held`: the response as it arrived, whole; `original`: as the log
    /// recorded it (what ``FlowChanges/originalResponse`` keeps after an edit).
    package mutating func responseDecided(_ decision: Breakpoints.Decision, held: ExchangeResponse, original: Response?) -> ResponseRelease {
        guard state == .responseHeld else { return .cancelled }
        state = .done
        switch decision {
        case .kill: return .kill
        case .release(.cancelled): return .cancelled
        case .release, .resume(nil): return .deliver(held, edited: false)
        case .resume(let resume?):
            guard let edit = resume.response else { return .deliver(held, edited: false) }
            var record = changes ?? FlowChanges(rules: [])
            record.edited = (record.edited ?? []) + [.response]
            record.originalResponse = original
            changes = record
            return .deliver(Self.applying(edit, to: held, marker: policy.redactionMarker), edited: true)
        }
    }

    // MARK: - Edits

    /// The request a person made of `original` in an editor: method, URL,
    /// header fields and body from `edit`, except that a field whose value
    /// is the redaction `marker` keeps the original value (the viewer only
    /// saw the marker), and a body still marked truncated keeps the original body.
    package static func applying(_ edit: Request, to original: ExchangeRequest, marker: String) -> ExchangeRequest {
        var request = original
        request.method = edit.method
        if let url = URL(string: edit.url), url.scheme != nil, url.host != nil { request.url = url }
        // The fields the client adds itself (AsyncHTTPClient's `Host`) come
        // back apart, as the editor showed them: kept where this request has
        // them, so an edit that leaves them sends them; a client that adds
        // them later (libcurl) adds them again anyway.
        let clientFields = edit.clientHeaders.filter { field in original.headers.contains { HTTPHeader.namesMatch($0.name, field.name) } }
        request.headers = restoringRedacted(edit.headers + clientFields, from: original.headers, marker: marker)
        if edit.body?.isTruncated != true {
            let data = edit.body?.data ?? Data()
            request.body = data.isEmpty ? nil : data
            request.bodyStreams = false
        }
        return request
    }

    /// The response a person made of the one that arrived: status (a
    /// nonsense one keeps the original's), header fields and body from
    /// `edit`, with the same rules for redacted values and truncated bodies
    /// as requests, and a `Content-Length` that says the body's real length.
    package static func applying(_ edit: Response, to original: ExchangeResponse, marker: String) -> ExchangeResponse {
        var headers = restoringRedacted(edit.headers, from: original.headers, marker: marker)
        let body = edit.body.map { $0.isTruncated ? original.body : $0.data } ?? Data()
        if headers.first("Content-Length") != nil { headers.set("Content-Length", to: String(body.count)) }
        let status = (100...999).contains(edit.statusCode) ? edit.statusCode : original.statusCode
        return ExchangeResponse(statusCode: status, headers: headers, body: body)
    }

    /// An edit's header fields, each value left at the redaction `marker`
    /// given back the value of the same name in `original`.
    package static func restoringRedacted(_ edited: [HTTPHeader], from original: [HTTPHeader], marker: String) -> [HTTPHeader] {
        edited.map { header in
            guard header.value == marker, let kept = original.first(header.name) else { return header }
            return HTTPHeader(name: header.name, value: kept)
        }
    }
}

/// Where a replay comes from: the flow replayed, and whether a person
/// edited the request first.
package struct ReplayOrigin: Sendable, Equatable {
    package var id: FlowID
    package var edited: Bool
    /// A request a person wrote, sent through the client of flow `id`:
    /// marked composed, not a replay of that flow.
    package var composed: Bool

    package init(id: FlowID, edited: Bool, composed: Bool = false) {
        self.id = id
        self.edited = edited
        self.composed = composed
    }

    /// The change record a replay's flow starts with.
    package var changes: FlowChanges {
        composed ? FlowChanges(rules: [], composed: true) : FlowChanges(rules: [], replayOf: id, edited: edited ? [.request] : nil)
    }
}
