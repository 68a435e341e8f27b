import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// A network condition on a re-sent exchange, in URLSession's terms: the
/// inner task's response waits for the condition's latency and its body
/// goes to the app in slices at the condition's pace; a local answer or a
/// failure waits for the latency first. Nothing blocks a thread: the waits
/// are `queue.asyncAfter`, and a cancelled task's callbacks end the wait.
/// On `queue`, as all of ``ResendingFlow``.
extension ResendingFlow {
    /// The inner task's callbacks, kept in order while the condition makes them wait.
    enum PacedStep {
        case head(URLResponse)
        case data(Data)
        case end(Error?)
    }

    /// The response's way to the app under a condition.
    struct ResponsePace {
        var latency: Duration
        var pacer: Pacer?
        /// When the response may start: the head's arrival plus the latency.
        var notBefore: ContinuousClock.Instant?
        var steps: [PacedStep] = []
        /// A slice of the body taken from `steps`, due at this time.
        var slice: (data: Data, due: ContinuousClock.Instant)?
        var queuedBytes = 0
        var timerArmed = false
        /// The inner task was suspended because the app's side is this far behind.
        var suspended = false

        /// The most body kept waiting before the inner task is paused, so a
        /// slow pace never holds a whole body in memory.
        static let pauseAbove = 512 * 1024
        static let resumeBelow = 128 * 1024
    }

    /// Sets the pace for the response of a request about to be sent.
    func paceResponse() {
        let effect = started.effect
        guard effect.latency > .zero || effect.downBytesPerSecond != nil else { return }
        responsePace = ResponsePace(latency: effect.latency, pacer: effect.downBytesPerSecond.map(Pacer.init(bytesPerSecond:)))
    }

    /// Runs `body` on `queue` after the condition's latency (at once without one).
    func afterLatency(_ body: @escaping @Sendable () -> Void) {
        let latency = started.effect.latency
        guard latency > .zero else { return body() }
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(latency.nanoseconds)), execute: body)
    }

    /// A callback of the inner task: straight on, or in order behind the condition's wait.
    func paced(_ step: PacedStep, deliver: () -> Void) {
        guard var pace = responsePace else { return deliver() }
        if case .head = step, pace.notBefore == nil { pace.notBefore = .now + pace.latency }
        if case .data(let data) = step { pace.queuedBytes += data.count }
        pace.steps.append(step)
        responsePace = pace
        drainPaced()
    }

    /// Gives the app what is due, and waits (a timer on `queue`) for the rest.
    func drainPaced() {
        guard var pace = responsePace else { return }
        defer { if responsePace != nil { responsePace = pace } }
        while true {
            let now = ContinuousClock.now
            if let slice = pace.slice {
                // A cancelled task gets nothing more, so its end is not kept waiting.
                if slice.due > now, !clientIsDone { return arm(&pace, at: slice.due) }
                pace.slice = nil
                if !clientIsDone { deliverData(slice.data) }
                continue
            }
            guard !pace.steps.isEmpty else { break }
            if let start = pace.notBefore, start > now, !clientIsDone { return arm(&pace, at: start) }
            switch pace.steps.removeFirst() {
            case .head(let response):
                if !clientIsDone { deliverHead(response) }
            case .data(var data):
                pace.queuedBytes -= data.count
                if clientIsDone { continue }
                guard var pacer = pace.pacer else {
                    deliverData(data)
                    continue
                }
                let slice = data.prefix(pacer.sliceSize)
                data.removeFirst(slice.count)
                if !data.isEmpty {
                    pace.steps.insert(.data(data), at: 0)
                    pace.queuedBytes += data.count
                }
                pace.slice = (Data(slice), pacer.due(afterSending: slice.count, now: now))
                pace.pacer = pacer
            case .end(let error):
                responsePace = nil
                // The app cancelled while the response waited: the flow ends as its task did.
                return deliverEnd(error: error ?? (clientIsDone ? URLError(.cancelled) : nil))
            }
        }
        if pace.suspended, pace.queuedBytes < ResponsePace.resumeBelow {
            pace.suspended = false
            innerTask?.resume()
        } else if !pace.suspended, pace.queuedBytes > ResponsePace.pauseAbove {
            pace.suspended = true
            innerTask?.suspend()
        }
    }

    private func arm(_ pace: inout ResponsePace, at time: ContinuousClock.Instant) {
        if !pace.suspended, pace.queuedBytes > ResponsePace.pauseAbove {
            pace.suspended = true
            innerTask?.suspend()
        }
        guard !pace.timerArmed else { return }
        pace.timerArmed = true
        let wait = ContinuousClock.now.duration(to: time)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, wait.nanoseconds)))) {
            self.responsePace?.timerArmed = false
            self.drainPaced()
        }
    }

    /// A condition failed the request: after its latency the app's task
    /// fails with the error its own transfer would have reported, and the
    /// flow says so; nothing goes on the network.
    func failByCondition(_ failure: NetworkFailure, task: URLSessionTask, request: URLRequest, internals: TaskInternals, changes: FlowChanges) {
        guard let agent else { return }
        let error = failure.urlError(url: request.url)
        let flow = recordingWithoutNetwork(task: task, request: request, internals: internals, changes: changes, agent: agent)
        flow.start()
        afterLatency {
            flow.finish { recorder, _ in recorder.finished(error: error, requestBody: nil) }
            self.task = nil
            self.fail(error)
        }
    }
}
