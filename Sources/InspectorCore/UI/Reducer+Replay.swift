import Foundation
import InspectorIngest
import WireProtocol

/// A request netinspect sends itself (``Effect/send(_:)``), when the app
/// cannot send it again: a flow from a file, from an app that has exited or
/// does not allow control, from a client other than URLSession, or older
/// than the app's agent keeps.
///
/// ```swift
/// if case .send(let own) = Reducer.reduce(&state, .key(.character("r"))) {
///     replayClient.send(own)   // its flow arrives on OwnRequest.connection
/// }
/// ```
package struct OwnRequest: Sendable, Equatable {
    /// The request, with every value the person must fill in filled in.
    package var request: WireProtocol.Request
    /// The flow it sends again; nil for a request a person wrote (`n`,
    /// `:new curl …`), whose flow is marked composed.
    package var replayOf: FlowID?
    /// Whether the person edited it first.
    package var isEdited: Bool

    /// The connection netinspect's own client's flows arrive on, as if from
    /// one more agent.
    package static let connection = ConnectionID.netinspect
    /// The app name of that pseudo-agent, and the client of its flows.
    package static let clientName = "netinspect"
}

extension Reducer {
    /// CaptureAgent's replay buffer keeps the app's most recent requests
    /// (`ReplayLimits.requests`, 100 by default, docs/AGENT.md) and ignores a
    /// replay of one it no longer keeps, without an answer. The agent does not
    /// say its bound, so the documented default is the one counted here.
    static let agentReplayDepth = 100
    /// The bytes of bodies the agent keeps for replay (`ReplayLimits.bytes`,
    /// 16 MiB by default): a request body larger than that is not kept.
    static let agentReplayBytes = 16 * 1024 * 1024

    /// What a redacted value reads as in a log (CaptureAgent's default
    /// `redactionMarker`), in a header and, percent-encoded, in a URL.
    static let redactionMarkers = ["<redacted>", "%3Credacted%3E"]

    /// How a flow is sent again: the one decision `r`, `:replay @marked`
    /// and `:replay.client` share.
    enum ReplayRoute {
        /// The app's agent sends it, through the app's client.
        case app(AgentInfo)
        /// netinspect's own client sends it; the string says why not the app.
        case own(String)
        /// netinspect's own client can, once the person fills in what the
        /// log does not hold (the string says what), in the editor.
        case needsEditor(why: String, missing: String)
    }

    static func replayRoute(_ record: FlowStore.Record, in state: AppState) -> ReplayRoute {
        if let agent = appReplayAgent(record, in: state) { return .app(agent) }
        let why = appReplayObstacle(record, in: state)
        if let missing = missingValues(record.log.request) { return .needsEditor(why: why, missing: missing) }
        return .own(why)
    }

    /// The effect that sends `record` again by `route` (none for ``ReplayRoute/needsEditor(why:missing:)``).
    static func replayEffect(_ record: FlowStore.Record, by route: ReplayRoute) -> Effect {
        switch route {
        case .app(let agent): .control(.replay(record.log.id), to: agent.connection)
        case .own: .send(OwnRequest(request: sendable(record.log.request), replayOf: record.log.id, isEdited: false))
        case .needsEditor: .none
        }
    }

    /// `r`: the app's agent sends the request again when it can; else
    /// netinspect sends it itself, after the person fills in what the log
    /// does not hold.
    static func replay(_ sequence: Int, in state: inout AppState) -> Effect {
        guard let record = state.session.store[sequence] else { return .none }
        let name = "\(record.log.request.method) \(Format.displayPath(of: record.log.request.url))"
        let route = replayRoute(record, in: state)
        switch route {
        case .app(let agent):
            state.notice = Notice(text: "Asked \(agent.hello.appName) to replay \(name)", isError: false)
        case let .needsEditor(why, missing):
            state.notice = Notice(text: "\(why); netinspect sends it itself once you fill in \(missing) in the editor", isError: false)
            return ownReplayEditor(record)
        case .own(let why):
            state.notice = Notice(text: "\(why): netinspect sent \(name) itself", isError: false)
        }
        return replayEffect(record, by: route)
    }

    /// `e` on a flow that is not held: edit, then replay through the app's
    /// agent when it can, else through netinspect's own client.
    static func editThenReplay(_ record: FlowStore.Record, in state: inout AppState) -> Effect {
        guard let agent = appReplayAgent(record, in: state) else { return ownReplayEditor(record) }
        let request = record.log.request
        return .edit(EditSession(id: record.log.id, connection: agent.connection, purpose: .replay(request),
                                 text: HTTPMessageText.text(of: request)))
    }

    private static func ownReplayEditor(_ record: FlowStore.Record) -> Effect {
        let request = record.log.request
        return .edit(EditSession(id: record.log.id, connection: OwnRequest.connection, purpose: .ownReplay(request),
                                 text: HTTPMessageText.text(of: request)))
    }

    /// The person saved an edit for netinspect's own client.
    static func editedOwnReplay(_ text: String, original: WireProtocol.Request, id: FlowID,
                                in state: inout AppState) throws(HTTPMessageText.ParseError) -> Effect {
        let request = try HTTPMessageText.request(from: text, original: original)
        if let missing = missingValues(request) {
            state.notice = Notice(text: "Not sent: \(missing) still to fill in (netinspect never guesses a redacted value)", isError: true)
            return .none
        }
        state.notice = Notice(text: "netinspect sent your edit: \(request.method) \(Format.displayPath(of: request.url))", isError: false)
        return .send(OwnRequest(request: sendable(request), replayOf: id, isEdited: true))
    }

    /// The clients whose flows the app's agent can send again (docs/AGENT.md's
    /// table of powers); an inbound flow is a request the app received, which
    /// only netinspect's own client can send again.
    static func agentReplays(_ log: NetworkLog) -> Bool {
        guard !log.isInbound else { return false }
        guard let client = log.source?.client else { return true }
        return client == .urlSession || client == .asyncHTTPClient || client == .vaporClient
    }

    /// The agent that can replay `record`, if any.
    static func appReplayAgent(_ record: FlowStore.Record, in state: AppState) -> AgentInfo? {
        guard agentReplays(record.log),
              let index = record.agent, state.session.agents.indices.contains(index) else { return nil }
        let agent = state.session.agents[index]
        guard agent.isConnected, agent.hello.acceptsControl, agent.connection != .file,
              (record.log.request.body?.size ?? 0) <= agentReplayBytes,
              newerFlows(than: record, in: state.session.store, upTo: agentReplayDepth) < agentReplayDepth else { return nil }
        return agent
    }

    /// Why the app's agent cannot replay `record`, for the notice.
    private static func appReplayObstacle(_ record: FlowStore.Record, in state: AppState) -> String {
        guard let index = record.agent, state.session.agents.indices.contains(index),
              state.session.agents[index].connection != .file else {
            return "This flow came from a file, not a live app"
        }
        let agent = state.session.agents[index]
        let app = agent.hello.appName
        if record.log.isInbound {
            return "This is a request \(app) received; its agent replays only the calls \(app) makes"
        }
        if !agentReplays(record.log), let client = record.log.source?.client {
            return "\(app)'s agent replays URLSession, AsyncHTTPClient and Vapor client requests, this came from \(client)"
        }
        if !agent.isConnected { return "\(app) is no longer connected" }
        if !agent.hello.acceptsControl { return "\(app) does not allow control (NETINSPECT_CONTROL=1)" }
        if let body = record.log.request.body, body.size > agentReplayBytes {
            return "\(app) does not keep a request body over \(Format.size(agentReplayBytes)) for replay"
        }
        return "\(app) keeps only its last \(agentReplayDepth) requests, and this one is older"
    }

    /// How many flows of the same agent started after `record`, counted up to `limit`.
    static func newerFlows(than record: FlowStore.Record, in store: FlowStore, upTo limit: Int) -> Int {
        var count = 0
        var sequence = record.sequence + 1
        while count < limit, let next = store[sequence] {
            if next.agent == record.agent, next.log.changes?.replayOf == nil { count += 1 }
            sequence += 1
        }
        return count
    }

    /// What the log does not hold of a request and the person must supply,
    /// or nil when it can be sent as it is.
    static func missingValues(_ request: WireProtocol.Request) -> String? {
        var missing: [String] = []
        let redacted = request.headers.filter { header in redactionMarkers.contains { header.value.contains($0) } }.map(\.name)
        if !redacted.isEmpty { missing.append("the redacted \(redacted.joined(separator: ", "))") }
        if redactionMarkers.contains(where: request.url.contains) { missing.append("the URL's redacted values") }
        if request.body?.isTruncated == true { missing.append("the body (only its start was captured)") }
        return missing.isEmpty ? nil : missing.joined(separator: " and ")
    }

    /// The request as netinspect's client sends it: the app's own headers;
    /// those the app's client added (Host, Content-Length…) its own client adds.
    static func sendable(_ request: WireProtocol.Request) -> WireProtocol.Request {
        var request = request
        request.clientHeaders = []
        return request
    }
}
