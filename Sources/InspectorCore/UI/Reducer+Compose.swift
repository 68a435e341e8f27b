import Foundation
import InspectorIngest
import WireProtocol

extension Reducer {
    /// The request `n` opens when no flow is selected.
    static let composeTemplate = """
        GET https://example.com/ HTTP/1.1
        Accept: */*
        User-Agent: netinspect

        """

    /// `n` and `:new [curl …]`: a request a person writes. With no argument
    /// the editor opens on the selected flow's request, else on the
    /// template; with a curl command it is sent at once, as a shell would
    /// run it.
    static func newFlow(_ argument: String?, in state: inout AppState) -> Effect {
        if let argument {
            guard argument.hasPrefix("curl ") || argument == "curl" else {
                state.notice = Notice(text: "new takes nothing (then $EDITOR opens) or a curl command: new curl https://…", isError: true)
                return .none
            }
            do {
                return sendComposed(try CurlCommand.request(from: argument), startedFrom: nil, in: &state)
            } catch {
                state.notice = Notice(text: "Not sent: \(error.description)", isError: true)
                return .none
            }
        }
        let start = state.focusedFlow.flatMap { state.session.store[$0] }.flatMap { $0.isDeleted ? nil : $0 }
        let text = start.map { HTTPMessageText.text(of: $0.log.request) } ?? composeTemplate
        return .edit(EditSession(id: start?.log.id ?? composeID, connection: start.flatMap { connection(of: $0, in: state) } ?? OwnRequest.connection,
                                 purpose: .compose(start: start?.log.request), text: text))
    }

    /// The id an edit of a new request carries: it names no flow.
    static let composeID = FlowID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))

    private static func connection(of record: FlowStore.Record, in state: AppState) -> ConnectionID? {
        guard let index = record.agent, state.session.agents.indices.contains(index) else { return nil }
        return state.session.agents[index].connection
    }

    /// The person saved a new request (``EditSession/Purpose/compose(start:)``):
    /// HTTP text, or a curl command pasted into the editor.
    static func composed(_ text: String, session: EditSession, start: WireProtocol.Request?,
                         in state: inout AppState) throws(HTTPMessageText.ParseError) -> Effect {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("curl ") {
            do {
                return sendComposed(try CurlCommand.request(from: trimmed), startedFrom: nil, in: &state)
            } catch {
                state.notice = Notice(text: "Not sent: \(error.description)", isError: true)
                return .none
            }
        }
        let original = start ?? WireProtocol.Request(method: "GET", url: "https://example.com/")
        let request = try HTTPMessageText.request(from: text, original: original)
        return sendComposed(request, startedFrom: start == nil ? nil : session.id, in: &state)
    }

    /// Sends a request a person wrote, by the one path every new request
    /// takes: through a connected app's own client when one allows control
    /// (as an edited replay of a flow its agent still keeps, the carrier,
    /// marked composed), else with netinspect's own client. `startedFrom`:
    /// the flow the person began from, the carrier when its app can still
    /// send it, so the values the log redacted come back from the agent.
    static func sendComposed(_ request: WireProtocol.Request, startedFrom: FlowID?, in state: inout AppState) -> Effect {
        let name = "\(request.method) \(Format.displayPath(of: request.url))"
        let start = startedFrom.flatMap { state.session.store.sequence(of: $0) }.flatMap { state.session.store[$0] }
        let carrier = start.flatMap { record in appReplayAgent(record, in: state).map { (record, $0, "the flow you began from") } }
            ?? composeCarrier(for: request, in: state)
        if let carrier {
            let (record, agent, why) = carrier
            if record.log.id != startedFrom, let missing = missingValues(request) {
                state.notice = Notice(text: "Not sent: \(missing) still to fill in (netinspect never guesses a redacted value)", isError: true)
                return .none
            }
            let client = record.log.source?.client.rawValue ?? "client"
            state.notice = Notice(text: "Sent \(name) through \(agent.hello.appName)'s \(client) (\(why))", isError: false)
            return .control(.compose(through: record.log.id, request), to: agent.connection)
        }
        if let missing = missingValues(request) {
            state.notice = Notice(text: "Not sent: \(missing) still to fill in (netinspect never guesses a redacted value)", isError: true)
            return .none
        }
        state.notice = Notice(text: "No connected app allows control: netinspect sent \(name) itself", isError: false)
        return .send(OwnRequest(request: sendable(request), replayOf: nil, isEdited: false))
    }

    /// The flow whose client sends a new request, with its agent and why it
    /// was chosen: among the apps that allow control, the newest flow its
    /// agent still keeps to the request's host; else the newest such flow
    /// of the app that connected last.
    static func composeCarrier(for request: WireProtocol.Request, in state: AppState) -> (FlowStore.Record, AgentInfo, String)? {
        let host = URLAuthority(url: request.url).host.lowercased()
        let store = state.session.store
        var newestOfAgent: [Int: FlowStore.Record] = [:]
        var sequence = store.sequenceRange.upperBound - 1
        var looked = 0
        // The agent keeps its last requests only (agentReplayDepth each), so
        // older flows cannot carry anything.
        let limit = agentReplayDepth * max(1, state.session.agents.count) * 2
        while sequence >= store.sequenceRange.lowerBound, looked < limit {
            defer { sequence -= 1; looked += 1 }
            guard let record = store[sequence], !record.isDeleted, let index = record.agent,
                  appReplayAgent(record, in: state) != nil else { continue }
            let agent = state.session.agents[index]
            if !host.isEmpty, record.host == host {
                return (record, agent, "its flows go to \(host)")
            }
            if newestOfAgent[index] == nil { newestOfAgent[index] = record }
        }
        guard let record = newestOfAgent.max(by: { $0.key < $1.key })?.value, let index = record.agent else { return nil }
        return (record, state.session.agents[index], "the newest app that allows control")
    }
}
