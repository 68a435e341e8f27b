import InspectorIngest
import WireProtocol

/// Folds listener events into finished flows, for output that wants each
/// flow once, complete: `--dump`, `--json`, `--save`.
///
/// Only flows still in progress are held, at most ``maximumPending`` of them
/// (the oldest are forgotten beyond that), so memory stays bounded however
/// long it runs.
///
/// ```swift
/// var assembler = FlowAssembler()
/// for event in inbox.drain() {
///     for finished in assembler.apply(event) { print(DumpFormat.line(finished.log, in: .gmt)) }
/// }
/// ```
package struct FlowAssembler: Sendable {
    /// A flow that reached a final state, with the agent it came from.
    package struct Finished: Sendable, Equatable {
        /// The complete flow.
        package var log: NetworkLog
        /// The hello of the agent connection it came from.
        package var agent: Hello?

        /// A flow and its agent's hello (nil for a file's flows).
        package init(log: NetworkLog, agent: Hello?) {
            self.log = log
            self.agent = agent
        }
    }

    /// In-progress flows held at most.
    let maximumPending: Int
    /// Flows forgotten because too many were in progress at once.
    private(set) var forgottenFlows = 0

    private var pending: [FlowID: NetworkLog] = [:]
    private var pendingOrder: [FlowID] = []
    private var agents: [ConnectionID: Hello] = [:]
    private var connectionOfFlow: [FlowID: ConnectionID] = [:]
    /// Events of each pending flow, by the connection they came on.
    private var eventsOfFlow: [FlowID: [ConnectionID: Int]] = [:]
    /// Events the assembler is done with (printed in a flow, or discarded)
    /// since the last ``takeSettledEvents()``, by connection.
    private var settled: [ConnectionID: Int] = [:]

    /// Creates an assembler holding at most `maximumPending` unfinished flows.
    package init(maximumPending: Int = 10_000) {
        self.maximumPending = max(1, maximumPending)
    }

    /// Applies one event; returns the flows it finished.
    package mutating func apply(_ event: InboxEvent) -> [Finished] {
        switch event {
        case let .connected(connection, hello, _):
            agents[connection] = hello
        case .disconnected(let connection, _):
            agents[connection] = nil
        case let .message(connection, message):
            return apply(message, from: connection)
        case .listening, .rejected:
            break
        }
        return []
    }

    /// A flow still in progress, as its events so far make it (nil once
    /// it finished, or when it was never started here).
    package func inProgress(_ id: FlowID) -> NetworkLog? {
        pending[id]
    }

    /// The events, per connection, that are done with since the last call:
    /// those of flows returned as finished, and those discarded (for flows
    /// never started here, or forgotten). What the headless inspector
    /// acknowledges once it has printed the finished flows.
    package mutating func takeSettledEvents() -> [ConnectionID: Int] {
        defer { settled = [:] }
        return settled
    }

    private mutating func settle(_ count: Int, from connection: ConnectionID) {
        settled[connection, default: 0] += count
    }

    private mutating func settle(_ counts: [ConnectionID: Int]?) {
        for (connection, count) in counts ?? [:] { settle(count, from: connection) }
    }

    /// Folds an event into its pending flow; one for a flow not pending
    /// (finished or evicted) is settled at once.
    private mutating func applyToPending(_ id: FlowID, from connection: ConnectionID,
                                         _ change: (inout NetworkLog) -> Void) -> [Finished] {
        guard pending[id] != nil else {
            settle(1, from: connection)
            return []
        }
        change(&pending[id]!)
        eventsOfFlow[id, default: [:]][connection, default: 0] += 1
        return []
    }

    private mutating func apply(_ message: Message, from connection: ConnectionID) -> [Finished] {
        switch message {
        case .flowStarted(let log):
            if log.state.isFinal {
                settle(1, from: connection)
                return [Finished(log: log, agent: agents[connection])]
            }
            if pending.updateValue(log, forKey: log.id) == nil { pendingOrder.append(log.id) }
            connectionOfFlow[log.id] = connection
            eventsOfFlow[log.id, default: [:]][connection, default: 0] += 1
            evictIfNeeded()
        case .flowResponse(let event):
            return applyToPending(event.id, from: connection) { $0.apply(event) }
        case .grpcMessage(let event):
            return applyToPending(event.id, from: connection) { $0.apply(event) }
        case .bodyPart(let event):
            return applyToPending(event.id, from: connection) { $0.apply(event) }
        case .webSocketMessage(let event):
            return applyToPending(event.id, from: connection) { $0.apply(event) }
        case .flowFinished(let event):
            guard var log = pending.removeValue(forKey: event.id) else {
                settle(1, from: connection)
                return []
            }
            log.apply(event)
            settle(eventsOfFlow.removeValue(forKey: event.id))
            settle(1, from: connection)
            let source = connectionOfFlow.removeValue(forKey: event.id) ?? connection
            compactOrderIfNeeded()
            return [Finished(log: log, agent: agents[source])]
        case .hello, .status, .held, .released:
            break
        }
        return []
    }

    private mutating func evictIfNeeded() {
        while pending.count > maximumPending, !pendingOrder.isEmpty {
            let oldest = pendingOrder.removeFirst()
            if pending.removeValue(forKey: oldest) != nil {
                connectionOfFlow[oldest] = nil
                settle(eventsOfFlow.removeValue(forKey: oldest))
                forgottenFlows += 1
            }
        }
    }

    /// Finished flows leave stale ids in `pendingOrder`; drop them once they
    /// outnumber the live ones, so the array stays proportional to `pending`.
    private mutating func compactOrderIfNeeded() {
        if pendingOrder.count > 2 * pending.count + 64 {
            pendingOrder.removeAll { pending[$0] == nil }
        }
    }
}
