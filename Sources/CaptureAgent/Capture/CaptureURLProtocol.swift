import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The `URLProtocol` the agent puts first in a session's `protocolClasses`.
///
/// It loads nothing itself. In `startLoading()` it picks a ``CapturePath``
/// for the task:
/// - in place (almost every task): it creates the protocol that would have
///   run the task without the agent (``NextProtocol``), bound to the app's
///   own task, with a ``RecordingClient``, and forwards `startLoading` and
///   `stopLoading` to it synchronously; corelibs runs the task natively and
///   ``InPlaceFlow`` records what the client is told.
/// - re-sent (data tasks whose body goes straight to a session data
///   delegate, and stream bodies, and every flow a viewer's rules or
///   breakpoints may change): its ``ResendingFlow`` re-sends the request
///   through the inner session of the original session's ``Demux`` and
///   replays the inner callbacks to this instance's client.
final class CaptureURLProtocol: URLProtocol {
    private enum Mode {
        case idle
        case inPlace(next: URLProtocol, flow: InPlaceFlow?)
        case resent(ResendingFlow)
    }

    // Touched only on the task's work queue (`startLoading`/`stopLoading`).
    private var mode = Mode.idle

    override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let agent = AgentRegistry.active, agent.configuration.shouldCapture(url)
        else { return false }
        InboundParents.note(request)
        return true
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        a == b
    }

    /// The path this instance took (for tests); nil before it started.
    var path: CapturePath? {
        switch mode {
        case .idle: nil
        case .inPlace: .inPlace
        case .resent: .resent
        }
    }

    /// Runs on the task's work queue, which every session's work queue
    /// targets: creating or resuming another task from here deadlocks. The
    /// in-place path creates a protocol, not a task, and starts it right here,
    /// as corelibs would have; the re-sending path does the rest on its queue.
    override func startLoading() {
        switch mode {
        case .inPlace(let next, _):
            // `resume()` after `suspend()` calls this again on the same instance.
            return next.startLoading()
        case .resent(let flow):
            return flow.resume()
        case .idle:
            break
        }
        guard let task else { return }
        // `canInit` just said yes for the active agent; if it stopped in
        // between, the flow still runs through the agent that accepted it.
        let agent = AgentRegistry.active ?? AgentRegistry.mostRecent
        let internals = TaskInternals(of: task)
        let parentID = InboundParents.take(for: task.currentRequest ?? request)
        if let agent, ObservedProtocols.isReSending(internals.session),
           let nextClass = NextProtocol.protocolClass(
               for: task.currentRequest ?? request,
               sessionClasses: internals.session?.configuration.protocolClasses,
               defaults: agent.defaultProtocolClasses
           ) {
            // The app's own protocol re-sending a task the agent already
            // records where the app made it: run it as without the agent.
            let next = nextClass.init(task: task, cachedResponse: cachedResponse, client: client)
            mode = .inPlace(next: next, flow: nil)
            agent.count(.duplicate)
            return next.startLoading()
        }
        // A request a viewer's rule changes (or answers) goes the re-sending
        // path, which can send a request other than the app's. Download
        // tasks stay in place: the re-sending path cannot run them.
        // While a viewer asks for breakpoints every flow goes the re-sending
        // path, the one that can hold a request, and a response before the app sees it.
        let decided = if let agent, !(task is URLSessionDownloadTask) {
            ControlledFlow.decide(ExchangeRequest(task.originalRequest ?? request, taskBody: internals.body), agent: agent,
                                  policy: agent.controlPolicy)
        } else {
            ControlledFlow.Decision.none
        }
        if let agent, decided.changes == nil, !decided.intercepts,
           CapturePath.choose(for: task, request: request, internals: internals) == .inPlace,
           let nextClass = NextProtocol.protocolClass(
               for: task.currentRequest ?? request,
               sessionClasses: internals.session?.configuration.protocolClasses,
               defaults: agent.defaultProtocolClasses
           ),
           let client {
            let flow = InPlaceFlow(agent: agent, task: task, request: task.originalRequest ?? request, internals: internals, parentID: parentID)
            let next = nextClass.init(task: task, cachedResponse: cachedResponse, client: RecordingClient(forwardingTo: client, flow: flow))
            mode = .inPlace(next: next, flow: flow)
            agent.count(.inPlace)
            flow.starting(native: next)
            next.startLoading()
            return
        }
        let flow = ResendingFlow(agent: agent)
        flow.owner = self
        flow.parentID = parentID
        mode = .resent(flow)
        agent?.count(.resent)
        flow.begin(task: task, request: request, internals: internals, cachedResponse: cachedResponse, decided: decided)
    }

    override func stopLoading() {
        // `suspend()` and `cancel()` both end up here; only the state tells them apart.
        let suspending = task?.state == .suspended
        switch mode {
        case .idle:
            break
        case .inPlace(let next, let flow):
            // corelibs set `task.error` before calling this, and reports the
            // cancellation to the client itself, past the recording client.
            if !suspending { flow?.cancelled(native: next) }
            next.stopLoading()
            if suspending { flow?.suspended() }
        case .resent(let flow):
            if suspending { flow.suspend() } else { flow.cancel() }
        }
    }
}
