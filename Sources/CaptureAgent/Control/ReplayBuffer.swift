import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// Recent requests as the app made them, kept only while control is allowed,
/// so a viewer can replay a flow whose log has redacted values.
///
/// A replay goes through a new session made from the original session's
/// configuration (so it is captured, and rules apply again), with no
/// delegate: the app's delegates never hear of it, and its result goes
/// nowhere but the log, where the new flow says which flow it replays.
package final class ReplayBuffer: Sendable {
    private struct Entry {
        var id: FlowID
        var request: URLRequest
        var configuration: URLSessionConfiguration
        var bytes: Int
    }

    private struct State {
        var entries: [Entry] = []
        var bytes = 0
        /// Replay tasks in flight, by task, with the flow they replay.
        var origins: [ObjectIdentifier: Origin] = [:]
    }

    private let limits: CaptureAgent.Configuration.ReplayLimits
    // URLRequest and URLSessionConfiguration are kept as copies and only read.
    private let state = Locked(State())

    init(limits: CaptureAgent.Configuration.ReplayLimits) {
        self.limits = limits
    }

    /// Keeps `request` (the app's, before rules) for `id`. Bodies other than
    /// data, and bodies over the byte bound, are not kept: such a flow
    /// cannot be replayed.
    func remember(_ id: FlowID, request: URLRequest, body: Data?, configuration: URLSessionConfiguration?) {
        guard limits.requests > 0, let configuration else { return }
        let size = body?.count ?? 0
        guard size <= limits.bytes else { return }
        var kept = request
        // One replaces the other in URLRequest: the stream goes first.
        kept.httpBodyStream = nil
        kept.httpBody = body
        let entry = Entry(id: id, request: kept, configuration: configuration.copy() as? URLSessionConfiguration ?? configuration, bytes: size)
        state.withLock { state in
            state.entries.append(entry)
            state.bytes += size
            while state.entries.count > limits.requests || state.bytes > limits.bytes {
                state.bytes -= state.entries.removeFirst().bytes
            }
        }
    }

    /// Where a replay comes from.
    package struct Origin: Sendable {
        /// The flow replayed.
        var id: FlowID
        /// Whether a person edited the request first.
        var edited: Bool

        /// The change record of the replay's flow.
        var changes: FlowChanges {
            FlowChanges(rules: [], replayOf: id, edited: edited ? [.request] : nil)
        }
    }

    /// Sends the request of flow `id` again, or what a person made of it in
    /// an editor (`edited`, see ``Breakpoints/request(_:applyingTo:body:marker:)``);
    /// does nothing for a flow no longer (or never) kept.
    func replay(_ id: FlowID, edited: Request?, marker: String) {
        guard let entry = state.withLock({ $0.entries.last { $0.id == id } }) else { return }
        var request = entry.request
        if let edited {
            request = Breakpoints.request(edited, applyingTo: request, body: request.httpBody, marker: marker)
        }
        let session = URLSession(configuration: entry.configuration)
        // swift-corelibs-foundation keeps a task's completion handler until
        // it is done; the session goes once its one task has finished.
        let task = session.dataTask(with: request) { _, _, _ in session.finishTasksAndInvalidate() }
        state.withLock { $0.origins[ObjectIdentifier(task)] = Origin(id: id, edited: edited != nil) }
        task.resume()
    }

    /// The flow a replay task replays, taken out once asked (each task asks once, as it starts).
    func origin(of task: URLSessionTask) -> Origin? {
        state.withLock { $0.origins.removeValue(forKey: ObjectIdentifier(task)) }
    }

    /// How many requests are kept (for tests).
    var count: Int { state.current.entries.count }
}
