import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// Which inbound flow each captured URLSession task was made for.
///
/// A handler's `ServiceContext` is a task-local, visible only on the app's
/// own task. corelibs asks `canInit(with:)` there (inside `resume()`, for
/// completion-handler and async tasks alike), but when the session has a
/// `URLCache` (`URLSessionConfiguration.default` does) it creates and starts
/// the protocol from the cache lookup's callback, off that task
/// (`TaskContextOnLinuxTests` pins both). So `canInit` notes the parent under
/// the request, and the flow that starts with an equal request takes it.
/// Two identical requests made at once for different inbound flows can
/// trade parents; an entry nobody takes is forgotten after a minute, and
/// at most ``capacity`` wait.
enum InboundParents {
    private struct Entry {
        var request: URLRequest
        var parent: FlowID
        var noted: UInt64
    }

    static let capacity = 1024
    private static let lifetime: UInt64 = 60_000_000_000
    private static let pending = Locked<[Entry]>([])

    /// Notes the current handler's inbound flow for `request`, if the caller
    /// runs inside one. Call on the app's task (from `canInit`).
    static func note(_ request: URLRequest) {
        guard let parent = CaptureAgent.currentInboundFlowID else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        pending.withLock { entries in
            entries.removeAll { now - $0.noted > lifetime }
            if entries.count >= capacity { entries.removeFirst(entries.count - capacity + 1) }
            entries.append(Entry(request: request, parent: parent, noted: now))
        }
    }

    /// The parent noted for `request`, oldest first, taken once.
    static func take(for request: URLRequest) -> FlowID? {
        pending.withLock { entries in
            guard !entries.isEmpty, let index = entries.firstIndex(where: { $0.request == request }) else { return nil }
            return entries.remove(at: index).parent
        }
    }
}
