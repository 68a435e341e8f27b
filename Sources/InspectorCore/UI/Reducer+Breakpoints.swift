import FlowFilter
import Foundation
import InspectorIngest
import WireProtocol

/// A message open in the person's editor, and what saving it does.
package struct EditSession: Sendable, Equatable {
    /// What the edit is for.
    enum Purpose: Sendable, Equatable {
        /// A request held at a breakpoint: saving a change resumes it with the change.
        case heldRequest(WireProtocol.Request)
        /// A response held at a breakpoint: saving a change gives the app the change.
        case heldResponse(Response)
        /// Edit-then-replay: saving a change sends the changed request as a new flow.
        case replay(WireProtocol.Request)
        /// Edit-then-send with netinspect's own client, for a flow the app
        /// cannot replay: saving sends the request once nothing redacted is left.
        case ownReplay(WireProtocol.Request)
        /// A new request (`n`): the template, or the request of the flow
        /// it starts from. Saving a change (or a curl command) sends it.
        case compose(start: WireProtocol.Request?)
    }

    /// The flow (a new request's: the flow it starts from, else ``Reducer/composeID``).
    package var id: FlowID
    /// The connection of the flow's agent.
    var connection: ConnectionID
    /// What the edit is for, with the message as it was.
    var purpose: Purpose
    /// The text the editor opens with.
    package var text: String
}

extension Reducer {
    /// `a`, `X` and `e` on one flow (``onSelectedFlows(_:argument:in:)``
    /// found it): answer its breakpoint, or edit then replay one not held.
    static func heldFlowCommand(_ command: Command, on sequence: Int, in state: inout AppState) -> Effect {
        guard let record = state.session.store[sequence] else { return .none }
        if command == .edit, record.hold == nil {
            return editThenReplay(record, in: &state)
        }
        guard let hold = record.hold else {
            state.notice = Notice(text: "This flow is not held (i sets which flows are)", isError: true)
            return .none
        }
        guard let agent = controllableAgent(of: record, doing: "answer a breakpoint", in: &state) else { return .none }
        let name = "\(record.log.request.method) \(Format.displayPath(of: record.log.request.url))"
        switch command {
        case .resume:
            state.notice = Notice(text: "Resumed \(name)", isError: false)
            return .control(.resume(FlowResume(id: record.log.id)), to: agent.connection)
        case .kill:
            state.notice = Notice(text: "Killed \(name): the app gets a cancellation", isError: false)
            return .control(.kill(record.log.id), to: agent.connection)
        default:
            switch hold.phase {
            case .request:
                let request = record.log.request
                return .edit(EditSession(id: record.log.id, connection: agent.connection, purpose: .heldRequest(request),
                                         text: HTTPMessageText.text(of: request)))
            case .response:
                guard let response = hold.response ?? record.log.response else { return .none }
                return .edit(EditSession(id: record.log.id, connection: agent.connection, purpose: .heldResponse(response),
                                         text: HTTPMessageText.text(of: response)))
            }
        }
    }

    /// The connected agent a flow came from, if it accepts control.
    static func liveAgent(of record: FlowStore.Record, in state: AppState) -> AgentInfo? {
        guard let index = record.agent, state.session.agents.indices.contains(index) else { return nil }
        let agent = state.session.agents[index]
        return agent.isConnected && agent.hello.acceptsControl ? agent : nil
    }

    /// The agent that can act on `record`, or nil with a notice saying why not.
    static func controllableAgent(of record: FlowStore.Record, doing action: String, in state: inout AppState) -> AgentInfo? {
        guard let index = record.agent, state.session.agents.indices.contains(index) else {
            state.notice = Notice(text: "This flow came from no live app (a file?): nothing can \(action) it", isError: true)
            return nil
        }
        let agent = state.session.agents[index]
        guard agent.isConnected else {
            state.notice = Notice(text: "\(agent.hello.appName) is no longer connected: it cannot \(action)", isError: true)
            return nil
        }
        guard agent.hello.acceptsControl else {
            state.notice = Notice(text: "\(agent.hello.appName) does not allow control: start it with NETINSPECT_CONTROL=1 to \(action)", isError: true)
            return nil
        }
        return agent
    }

    /// The person closed the editor.
    static func edited(_ session: EditSession, text: String?, failure: String?, in state: inout AppState) -> Effect {
        guard let text else {
            state.notice = Notice(text: "Could not edit: \(failure ?? "the editor failed")", isError: true)
            return .none
        }
        if case .compose = session.purpose, text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            state.notice = Notice(text: "The file was empty: nothing sent", isError: false)
            return .none
        }
        guard text != session.text else {
            switch session.purpose {
            case .replay, .ownReplay: state.notice = Notice(text: "Unchanged: nothing replayed", isError: false)
            case .compose(start: .none): state.notice = Notice(text: "The template is unchanged: nothing sent", isError: false)
            case .compose: state.notice = Notice(text: "Unchanged: nothing sent (r replays the flow as it is)", isError: false)
            default: state.notice = Notice(text: "Unchanged: the flow stays held (a resumes it, X kills it)", isError: false)
            }
            return .none
        }
        do {
            switch session.purpose {
            case .heldRequest(let original):
                let request = try HTTPMessageText.request(from: text, original: original)
                state.notice = Notice(text: "Resumed with your edit: \(request.method) \(Format.displayPath(of: request.url))", isError: false)
                return .control(.resume(FlowResume(id: session.id, request: request)), to: session.connection)
            case .heldResponse(let original):
                let response = try HTTPMessageText.response(from: text, original: original)
                state.notice = Notice(text: "Resumed with your edit: the app gets \(response.statusCode)", isError: false)
                return .control(.resume(FlowResume(id: session.id, response: response)), to: session.connection)
            case .replay(let original):
                let request = try HTTPMessageText.request(from: text, original: original)
                state.notice = Notice(text: "Asked the app to replay your edit: \(request.method) \(Format.displayPath(of: request.url))", isError: false)
                return .control(.editedReplay(session.id, request), to: session.connection)
            case .ownReplay(let original):
                return try editedOwnReplay(text, original: original, id: session.id, in: &state)
            case .compose(let start):
                return try composed(text, session: session, start: start, in: &state)
            }
        } catch {
            let still = switch session.purpose {
            case .replay, .ownReplay, .compose: "nothing was sent"
            case .heldRequest, .heldResponse: "the flow stays held"
            }
            state.notice = Notice(text: "Edit not applied (\(error.description)); \(still)", isError: true)
            return .none
        }
    }

    /// `i`: sets the breakpoint filter and sends it to every connected agent that accepts control.
    static func setIntercept(_ text: String, in state: inout AppState) -> Effect {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty {
            do {
                _ = try FilterExpression.parse(trimmed)
            } catch {
                state.notice = Notice(text: "Invalid intercept filter \"\(trimmed)\" at column \(error.offset + 1): \(error.message)", isError: true)
                return .none
            }
        }
        state.interceptFilter = trimmed.isEmpty ? nil : trimmed
        let agents = state.session.agents.filter { $0.isConnected && $0.hello.acceptsControl }
        let others = state.session.agents.filter { $0.isConnected && !$0.hello.acceptsControl }.count
        var text = trimmed.isEmpty ? "Breakpoints off" : "Holding flows that match \(trimmed)"
        if !trimmed.isEmpty, agents.isEmpty { text += "; no connected app allows control yet (NETINSPECT_CONTROL=1)" }
        if !trimmed.isEmpty, others > 0 { text += others == 1 ? "; 1 app without control ignores it" : "; \(others) apps without control ignore it" }
        state.notice = Notice(text: text, isError: false)
        return .batch(agents.map { .control(.intercept(state.interceptFilter), to: $0.connection) })
    }

    /// An agent that accepts control and connects while breakpoints are on gets the filter.
    static func interceptForNewAgents(_ events: [InboxEvent], in state: AppState) -> Effect {
        guard let filter = state.interceptFilter else { return .none }
        var effects: [Effect] = []
        for case let .connected(connection, hello, _) in events where hello.acceptsControl {
            effects.append(.control(.intercept(filter), to: connection))
        }
        return effects.isEmpty ? .none : .batch(effects)
    }
}
