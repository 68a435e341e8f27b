import FlowFilter
import Foundation
import InspectorIngest
import WireProtocol

/// An agent connected (or once connected) to the inspector.
package struct AgentInfo: Sendable, Equatable {
    /// The listener's id for the connection.
    var connection: ConnectionID
    /// What the agent said about itself.
    var hello: Hello
    /// The peer address, as the listener saw it.
    var peer: String
    /// Events the agent dropped while this inspector was connected: its
    /// cumulative count less what it had dropped before (its first status,
    /// sent with the hello, says that).
    var droppedEvents: Int {
        guard let reported = reportedDrops, let before = dropsBeforeConnecting else { return 0 }
        return reported - before
    }
    /// The agent's cumulative drop count when it connected (nil until its first status).
    var dropsBeforeConnecting: Int?
    /// The agent's cumulative drop count as last reported.
    var reportedDrops: Int?
    /// Whether the connection is still open.
    var isConnected: Bool

    /// Whether this is an app's agent, not netinspect's own client nor a file.
    var isApp: Bool { connection.isApp }
}

/// One line of the event log: connections, rejections, disconnections.
package struct SessionEvent: Sendable, Equatable {
    /// How serious it is.
    package enum Level: Sendable, Equatable {
        /// Something happened as expected.
        case info
        /// A connection was refused or dropped because of a fault.
        case error
    }

    /// When the inspector learned of it (from the injected clock).
    var date: Date
    /// How serious it is.
    var level: Level
    /// What happened, for a person.
    var text: String
}

/// Everything the inspector has recorded: flows, agents and the event log.
/// It turns ``InboxEvent``s into state; it never does I/O.
///
/// ```swift
/// var session = Session()
/// let changes = session.apply(inbox.drain(), at: Date())
/// view.apply(changes, from: session.store)
/// ```
package struct Session: Sendable {
    /// The `agentName` of the pseudo-agent that brings the flows of a file
    /// opened with `--read` (``ConnectionID/file``).
    package static let fileAgentName = "netinspect --read"

    /// The flows.
    package private(set) var store: FlowStore
    /// Agents in order of connection; a flow's ``FlowStore/Record/agent`` indexes this.
    private(set) var agents: [AgentInfo] = []
    /// The event log, oldest first, bounded to ``maximumEvents``.
    private(set) var events: [SessionEvent] = []
    /// Whether the event log has said, since the last clear, what the
    /// status bar's `ignored N` counts (said once: a stream cleared mid-way
    /// brings one ignored event a part).
    private var explainedIgnored = false
    /// Addresses the listener is listening on.
    private(set) var listening: [Endpoint] = []
    /// How many event-log lines are kept.
    let maximumEvents = 1_000
    private var agentIndex: [ConnectionID: Int] = [:]
    /// The server replay in force (`--server-replay`, `:replay.server`), nil for none.
    var serverReplay: ServerReplayProgress?

    /// An empty session.
    init(limits: FlowStore.Limits = FlowStore.Limits()) {
        store = FlowStore(limits: limits)
    }

    /// Apps whose agent's connection is open: not netinspect's own client
    /// (its replays) nor a file opened with `--read`.
    var connectedAgents: Int { agents.reduce(0) { $0 + ($1.isConnected && $1.isApp ? 1 : 0) } }

    /// Events dropped by all agents while connected to this inspector.
    var droppedEvents: Int { agents.reduce(0) { $0 + $1.droppedEvents } }

    /// Applies listener events in order, stamping log lines with `date`.
    /// Returns what changed in the store.
    mutating func apply(_ inboxEvents: [InboxEvent], at date: Date) -> [FlowStore.Change] {
        var changes: [FlowStore.Change] = []
        for event in inboxEvents { changes += apply(event, at: date) }
        return changes
    }

    /// Applies one listener event.
    mutating func apply(_ event: InboxEvent, at date: Date) -> [FlowStore.Change] {
        switch event {
        case .listening(let endpoint):
            listening.append(endpoint)
            log("listening on \(endpoint)", at: date)
        case let .connected(connection, hello, peer):
            agentIndex[connection] = agents.count
            agents.append(AgentInfo(connection: connection, hello: hello, peer: peer, isConnected: true))
            store.setOrigin(FlowOrigin(app: hello.appName, processID: hello.processID, host: hello.hostName), ofAgent: agents.count - 1)
            if connection == .file {
                log("Opened \(peer)", at: date)
            } else {
                log("\(hello.appName) (pid \(hello.processID) on \(hello.hostName)) connected from \(peer)"
                    + (hello.acceptsControl ? ", accepts control" : ""), at: date)
            }
        case let .message(connection, message):
            let ignored = store.unknownFlowEvents
            let changes = apply(message, from: agentIndex[connection], at: date)
            if store.unknownFlowEvents > ignored, !explainedIgnored {
                explainedIgnored = true
                log("Ignored events of a flow no longer in the list (cleared with z, deleted with d, or evicted beyond --max-flows) "
                    + "that was still under way; the status bar counts them as ignored N", at: date)
            }
            return changes
        case let .disconnected(connection, reason):
            guard let index = agentIndex[connection] else { break }
            agents[index].isConnected = false
            // The agent lets its held flows go on when its viewer goes.
            var changes: [FlowStore.Change] = []
            for sequence in store.heldSequences(agent: index) {
                if let id = store[sequence]?.log.id { changes += store.setHold(nil, of: id, at: date) }
            }
            let name = agents[index].hello.appName
            if let reason {
                log("\(name) disconnected: \(reason)", level: .error, at: date)
            } else {
                log("\(name) disconnected", at: date)
            }
            return changes
        case let .rejected(peer, reason):
            log("rejected connection from \(peer): \(reason)", level: .error, at: date)
        }
        return []
    }

    /// Changes a flow's mark or comment (see ``FlowStore/annotate(_:_:)``).
    mutating func annotate(_ sequence: Int, _ body: (inout FlowAnnotation) -> Void) -> [FlowStore.Change] {
        store.annotate(sequence, body)
    }

    /// Deletes a flow (see ``FlowStore/delete(_:)``).
    mutating func delete(_ sequence: Int) -> [FlowStore.Change] {
        store.delete(sequence)
    }

    /// Adds a copy of a flow as the newest (see ``FlowStore/duplicate(_:)``).
    mutating func duplicate(_ sequence: Int) -> [FlowStore.Change] {
        store.duplicate(sequence)
    }

    /// Removes every flow; agents and the event log stay.
    mutating func clearFlows() -> [FlowStore.Change] {
        explainedIgnored = false
        return store.removeAll()
    }

    private mutating func apply(_ message: Message, from agent: Int?, at date: Date) -> [FlowStore.Change] {
        switch message {
        case .hello: return []
        case .flowStarted(let log):
            if let mark = log.changes?.serverReplay { serverReplay?.count(mark) }
            return store.insert(log, agent: agent)
        case .flowResponse(let event): return store.apply(event)
        case .flowFinished(let event):
            // Server replay answers before the flow starts, so its mark
            // comes with flowStarted; counted here only if it did not.
            if let mark = event.changes?.serverReplay,
               store.sequence(of: event.id).flatMap({ store[$0]?.log.changes?.serverReplay }) == nil {
                serverReplay?.count(mark)
            }
            return store.apply(event)
        case .grpcMessage(let event): return store.apply(event)
        case .bodyPart(let event): return store.apply(event)
        case .webSocketMessage(let event): return store.apply(event)
        case .status(let status):
            guard let agent else { return [] }
            agents[agent].reportedDrops = status.droppedEvents
            if agents[agent].dropsBeforeConnecting == nil {
                agents[agent].dropsBeforeConnecting = status.droppedEvents
                if status.droppedEvents > 0 {
                    log("\(agents[agent].hello.appName) had dropped \(status.droppedEvents) events before this inspector connected "
                        + "(no viewer, or its queue full)", at: date)
                }
            }
            return []
        case .held(let hold):
            return store.setHold(hold, of: hold.id, at: date)
        case .released(let release):
            guard let sequence = store.sequence(of: release.id), store[sequence]?.hold?.phase == release.phase else { return [] }
            return store.setHold(nil, of: release.id, at: date)
        }
    }

    /// Adds a line to the event log (the inspector's own errors, such as a
    /// `--save` file that cannot be written).
    mutating func note(_ text: String, level: SessionEvent.Level, at date: Date) {
        log(text, level: level, at: date)
    }

    private mutating func log(_ text: String, level: SessionEvent.Level = .info, at date: Date) {
        events.append(SessionEvent(date: date, level: level, text: text))
        if events.count > maximumEvents { events.removeFirst(events.count - maximumEvents) }
    }
}
