import Foundation

/// Something an adapter keeps for as long as its agent runs (AsyncHTTPClient's
/// control tunnel), closed by ``CaptureAgent/stop()``.
package protocol AgentAttachment: AnyObject, Sendable {
    /// Called once, by the agent's `stop()`.
    func close()
}

/// The adapters' attachments of one agent, one of each type, made on first
/// use. The agent's own module knows nothing of what they are: an adapter
/// that needs a resource for the agent's life (a listening socket) keeps it
/// here rather than in a global table that would outlive the agent.
package final class AgentAttachments: Sendable {
    private struct State {
        var items: [ObjectIdentifier: any AgentAttachment] = [:]
        var isClosed = false
    }

    private let state = Locked(State())

    package init() {}

    /// The attachment of type `T`, made by `make` the first time; nil once
    /// the agent stopped, or when `make` fails.
    package func attachment<T: AgentAttachment>(_ type: T.Type, make: () -> T?) -> T? {
        state.withLock { state in
            guard !state.isClosed else { return nil }
            if let found = state.items[ObjectIdentifier(type)] { return found as? T }
            guard let made = make() else { return nil }
            state.items[ObjectIdentifier(type)] = made
            return made
        }
    }

    /// Closes every attachment; later look-ups make nothing.
    func closeAll() {
        let all = state.withLock { state in
            state.isClosed = true
            defer { state.items = [:] }
            return Array(state.items.values)
        }
        for item in all { item.close() }
    }
}
