import FlowFilter
import Foundation
import WireProtocol

/// The connected viewer's breakpoints: its intercept filter and the flows
/// held now, each waiting for the viewer's answer.
///
/// A hold always ends, exactly once: the viewer resumes or kills it, the
/// viewer goes away (``releaseAll(_:)``), the app cancels the task, or its
/// timeout passes. Whoever ends it first wins; the others find nothing.
package final class Breakpoints: Sendable {
    /// How a hold ended, given to the flow that waits.
    package enum Decision: Sendable {
        /// Go on; with an edit when the viewer sent one.
        case resume(FlowResume?)
        /// The viewer killed the flow.
        case kill
        /// Go on unmodified: timeout, viewer gone, or the app cancelled.
        case release(FlowRelease.Reason)

        /// What the `released` message says of it.
        package var reason: FlowRelease.Reason {
            switch self {
            case .kill: .killed
            case .resume: .resumed
            case .release(let reason): reason
            }
        }
    }

    private struct Hold {
        var serial: Int
        var phase: HoldPhase
        var decide: @Sendable (Decision) -> Void
    }

    private struct State {
        var filterText: String?
        var filter: FilterExpression?
        var holds: [FlowID: Hold] = [:]
        var nextSerial = 0
    }

    private let state = Locked(State())
    /// Seconds a flow waits for the viewer before it goes on unmodified.
    package let timeout: TimeInterval

    package init(timeout: TimeInterval) {
        self.timeout = timeout
    }

    /// Whether the viewer asked for breakpoints (one lock, no allocation:
    /// asked for every request while control is allowed).
    package var isActive: Bool { state.withLock { $0.filter != nil } }

    /// Sets the intercept filter; nil or a filter that does not compile
    /// holds nothing. Flows held now stay held (as in mitmproxy).
    package func intercept(_ text: String?) {
        let filter = text.flatMap { try? FilterExpression.parse($0) }
        state.withLock {
            $0.filterText = filter == nil ? nil : text
            $0.filter = filter
        }
    }

    /// The intercept filter now; nil holds nothing.
    package var filter: FilterExpression? { state.withLock { $0.filter } }

    /// Holds flow `id` until one decision arrives, which `decide` gets (on
    /// an arbitrary thread). Returns at once.
    package func hold(_ id: FlowID, phase: HoldPhase, decide: @escaping @Sendable (Decision) -> Void) {
        let serial = state.withLock { state in
            state.nextSerial += 1
            state.holds[id] = Hold(serial: state.nextSerial, phase: phase, decide: decide)
            return state.nextSerial
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
            _ = end(id, serial: serial, .release(.timeout))
        }
    }

    /// Ends the hold of flow `id` with `decision`; false when it is not
    /// held (a stale or hostile id: nothing happens).
    @discardableResult
    package func decide(_ id: FlowID, _ decision: Decision) -> Bool {
        end(id, serial: nil, decision)
    }

    /// The phase flow `id` is held in, if it is.
    package func phase(of id: FlowID) -> HoldPhase? {
        state.withLock { $0.holds[id]?.phase }
    }

    /// Ends every hold unmodified and forgets the filter: the viewer went away.
    package func releaseAll(_ reason: FlowRelease.Reason) {
        let holds = state.withLock { state in
            state.filter = nil
            state.filterText = nil
            defer { state.holds.removeAll() }
            return Array(state.holds.values)
        }
        for hold in holds { hold.decide(.release(reason)) }
    }

    /// How many flows are held now.
    package var heldCount: Int { state.withLock { $0.holds.count } }

    private func end(_ id: FlowID, serial: Int?, _ decision: Decision) -> Bool {
        let hold = state.withLock { state -> Hold? in
            guard let hold = state.holds[id], serial == nil || hold.serial == serial else { return nil }
            state.holds[id] = nil
            return hold
        }
        guard let hold else { return false }
        hold.decide(decision)
        return true
    }
}
