import Foundation
import WireProtocol

/// What the adapters share of a viewer's control: the policy snapshot each
/// exchange starts with, holds that say so on both ends, and the one
/// session numbering.
extension CaptureAgent {
    /// The control an exchange starting now is under: the viewer's rules and
    /// breakpoint filter when the app allows control, ``ExchangeControl/Policy/none`` otherwise.
    package var controlPolicy: ExchangeControl.Policy {
        guard allowsControl else { return .none }
        return ExchangeControl.Policy(rules: rules.rules, breakpoints: breakpoints,
                                      redactionMarker: configuration.redactionMarker, holdLimit: configuration.bodyCaptureLimit,
                                      replays: serverReplay.isActive)
    }

    /// Holds flow `id` for the viewer: sends `held`, waits without blocking
    /// a thread until the viewer, the timeout, the viewer's departure or
    /// the app's cancellation (``Breakpoints/decide(_:_:)`` with
    /// `.release(.cancelled)`) ends it, sends `released`, then calls
    /// `decide` (on an arbitrary thread). Every adapter's holds go through here.
    package func hold(_ id: FlowID, phase: HoldPhase, response: Response? = nil,
                      decide: @escaping @Sendable (Breakpoints.Decision) -> Void) {
        emit(.held(FlowHold(id: id, phase: phase, response: response, timeout: breakpoints.timeout)))
        breakpoints.hold(id, phase: phase) { [self] decision in
            // Whoever ends a hold may be the event stream's own thread (the
            // viewer went away), which must not wait on its own queue.
            DispatchQueue.global().async {
                self.emit(.released(FlowRelease(id: id, phase: phase, reason: decision.reason)))
                decide(decision)
            }
        }
    }

    /// ``hold(_:phase:response:decide:)`` for an async caller: the calling
    /// task's cancellation ends the hold as the app's own cancel.
    package func hold(_ id: FlowID, phase: HoldPhase, response: Response? = nil) async -> Breakpoints.Decision {
        guard !Task.isCancelled else { return .release(.cancelled) }
        let breakpoints = breakpoints
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Breakpoints.Decision, Never>) in
                hold(id, phase: phase, response: response) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            breakpoints.decide(id, .release(.cancelled))
        }
    }

    /// A number for a new client (a URLSession, an HTTPClient configuration,
    /// an OpenAPI middleware) in `NetworkLog.sessionID`: one counter per
    /// agent, so "session 3" names one client whichever kind it is.
    package func nextSessionID() -> Int {
        sessionNumbers.next()
    }
}

/// A counter behind a lock.
package final class Counter: Sendable {
    private let value: Locked<Int>

    package init(start: Int = 1) {
        value = Locked(start)
    }

    package func next() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
