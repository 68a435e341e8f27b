import Foundation
import WireProtocol

/// How a capture adapter sends a kept request again: through a client of
/// its own made like the app's (so the replay is captured, and rules apply
/// again), never through the app's delegates or handlers.
package protocol ReplaySender: Sendable {
    /// Sends `request`; the flow it makes says it replays `origin`.
    func send(_ request: ExchangeRequest, replaying origin: ReplayOrigin)
}

/// Recent requests as the app made them, kept only while control is allowed,
/// so a viewer can replay a flow whose log has redacted values. One buffer
/// for every client: each entry knows its adapter's ``ReplaySender``.
package final class ReplayBuffer: Sendable {
    private struct Entry {
        var id: FlowID
        var request: ExchangeRequest
        var sender: any ReplaySender
        var bytes: Int
    }

    private struct State {
        var entries: [Entry] = []
        var bytes = 0
        /// Replays in flight that an adapter recognises by an object of its
        /// own (a URLSession task), with the flow they replay.
        var origins: [ObjectIdentifier: ReplayOrigin] = [:]
    }

    private let limits: CaptureAgent.Configuration.ReplayLimits
    private let state = Locked(State())

    init(limits: CaptureAgent.Configuration.ReplayLimits) {
        self.limits = limits
    }

    /// Keeps `request` (the app's, before rules) for flow `id`. A body that
    /// streams, and a body over the byte bound, is not kept: such a flow
    /// cannot be replayed.
    package func remember(_ id: FlowID, request: ExchangeRequest, sender: any ReplaySender) {
        guard limits.requests > 0, !request.bodyStreams else { return }
        let size = request.body?.count ?? 0
        guard size <= limits.bytes else { return }
        let entry = Entry(id: id, request: request, sender: sender, bytes: size)
        state.withLock { state in
            state.entries.append(entry)
            state.bytes += size
            while state.entries.count > limits.requests || state.bytes > limits.bytes {
                state.bytes -= state.entries.removeFirst().bytes
            }
        }
    }

    /// Sends the request of flow `id` again, or what a person made of it in
    /// an editor (`edited`, applied as a breakpoint edit is: ``ExchangeControl``);
    /// does nothing for a flow no longer (or never) kept. `composed`: the
    /// edit is a request a person wrote, which only borrows the flow's client.
    package func replay(_ id: FlowID, edited: Request?, marker: String, composed: Bool = false) {
        guard let entry = state.withLock({ $0.entries.last { $0.id == id } }) else { return }
        var request = entry.request
        if let edited { request = ExchangeControl.applying(edited, to: request, marker: marker) }
        entry.sender.send(request, replaying: ReplayOrigin(id: id, edited: edited != nil, composed: composed))
    }

    /// A replay about to start that its adapter will know by `key`.
    package func expect(_ origin: ReplayOrigin, for key: ObjectIdentifier) {
        state.withLock { $0.origins[key] = origin }
    }

    /// The flow the replay known by `key` replays, taken out once asked.
    package func origin(for key: ObjectIdentifier) -> ReplayOrigin? {
        state.withLock { $0.origins.removeValue(forKey: key) }
    }

    /// How many requests are kept (for tests).
    var count: Int { state.current.entries.count }
}
