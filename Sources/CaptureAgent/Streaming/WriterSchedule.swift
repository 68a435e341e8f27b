import Foundation
import WireProtocol

/// When the agent's writer thread writes, waits and closes while it serves a
/// connection, as a value that does no I/O and never waits.
/// ``EventStreamerState`` holds it for the serving phase (connecting and
/// reconnecting are its own); ``EventStreamer``'s writer loop asks it what
/// to do next, under the lock that guards the queue, and carries that out
/// (the shape of `ExchangeControl`):
///
/// ```swift
/// var schedule = WriterSchedule()
/// schedule.connected(reportedDrops: 0)
/// switch schedule.next(queue: queue, now: now, stopDeadline: nil) {
/// case .write: …                 // WriterSchedule.takeBatch(from: &queue, into: &batch, …), then send
/// case .waitForEvents(let seconds): schedule.waited(timedOut: !condition.wait(until: …))
/// case .checkViewer: …           // read receipts; a viewer that closed ends the connection
/// case .pause(let microseconds): usleep(microseconds)
/// case .close: …                 // flushed, or out of time, while stopping
/// }
/// ```
///
/// Its policies:
/// - **Coalescing**: woken from idle by an event, the writer waits
///   ``coalescingDelayMicroseconds`` for more before it writes.
/// - **Folding**: while the viewer reads version 2, a flow's start waits in
///   the queue up to ``foldWindowNanoseconds`` for its later events
///   (``PendingQueue/holdBeforeNext(now:window:)``).
/// - **Batching**: one write carries at most ``batchMessages`` messages or
///   (but for one large message) ``batchBytes``.
/// - **Idle checks**: with nothing to write for ``idleCheckInterval``, the
///   writer reads what the viewer sent, and so learns that it went away.
/// - **Stopping**: everything queued is written until the stop deadline,
///   without waiting for folds; then the connection closes.
/// - **Status**: a `status` frame goes with the next write whenever the
///   cumulative drop count changed since the last one reported.
struct WriterSchedule {
    /// What the writer does next.
    enum Action: Equatable {
        /// Take a batch (``takeBatch(from:into:now:isStopping:)``) and write it.
        case write
        /// Nothing is queued: wait for an event, at most this long, then
        /// say whether the wait timed out (``waited(timedOut:)``).
        case waitForEvents(seconds: TimeInterval)
        /// Idle for a whole check interval: read what the viewer sent; a
        /// viewer that has closed ends the connection.
        case checkViewer
        /// Wait this long without the lock, then ask again: the events just
        /// behind may join the write, or the front flow may still end.
        case pause(microseconds: UInt32)
        /// Close the connection: the agent is stopping and the queue is
        /// empty or its time is up.
        case close
    }

    /// One write carries at most this many messages or (but for one large
    /// message) bytes: under load a handful of system calls carry what
    /// would take hundreds, yet the inspector still gets a steady stream.
    static let batchMessages = 64
    static let batchBytes = 256 * 1024
    /// How long the writer, woken from idle by an event, waits for more
    /// before it writes. Waking for every event cost a wakeup, a `send`, and
    /// on the inspector's side a read, a drain, a print and a receipt; a
    /// millisecond gathers the events of a few requests into one write, and
    /// the inspector shows a flow a millisecond later.
    static let coalescingDelayMicroseconds: UInt32 = 1000
    /// How long a flow's start waits in the queue, at most, for its later
    /// events to fold into it while the viewer reads version 2
    /// (``PendingQueue``): a flow that ends within it costs one frame,
    /// encoded, sent, decoded and acknowledged, instead of two or three.
    /// The inspector shows a flow up to this much later. The default of
    /// ``EventStreamer/Limits/foldWindowNanoseconds``.
    static let foldWindowNanoseconds: UInt64 = 5_000_000
    static let idleCheckInterval: TimeInterval = 0.2

    /// The writer found the queue empty: the next event wakes it from idle.
    private var isIdle = false
    /// The last wait for events timed out.
    private var idleCheckDue = false
    /// The drop count the viewer last heard of, in `status`.
    private var reportedDrops = 0

    // MARK: - Connections

    /// A connection was made, and its first `status` reported `reportedDrops`.
    mutating func connected(reportedDrops: Int) {
        isIdle = false
        idleCheckDue = false
        self.reportedDrops = reportedDrops
    }

    // MARK: - Writing

    /// What to do now, given the queue, the monotonic time in nanoseconds,
    /// and, once the agent is stopping, its deadline on the same clock.
    mutating func next(queue: PendingQueue, now: UInt64, stopDeadline: UInt64?) -> Action {
        let isStopping = stopDeadline != nil
        if queue.isEmpty, !isStopping {
            isIdle = true
            if idleCheckDue {
                idleCheckDue = false
                return .checkViewer
            }
            return .waitForEvents(seconds: Self.idleCheckInterval)
        }
        idleCheckDue = false
        if isIdle {
            isIdle = false
            // Woken by the first event after a pause: let the events just
            // behind it join the same write.
            if !isStopping, queue.count < Self.batchMessages { return .pause(microseconds: Self.coalescingDelayMicroseconds) }
        }
        if let stopDeadline {
            return queue.isEmpty || now >= stopDeadline ? .close : .write
        }
        let window = queue.limits.foldWindowNanoseconds
        let hold = queue.holdBeforeNext(now: now)
        guard hold == 0 else {
            // The front flow may still end: give its events the rest of the window to fold in.
            return .pause(microseconds: UInt32(min(hold / 1000 + 1, window / 1000)))
        }
        return .write
    }

    /// The wait for events ended, by an event (or a stop) or by its timeout.
    mutating func waited(timedOut: Bool) {
        idleCheckDue = timedOut
    }

    /// Whether a `status` goes with this write: the drop count changed
    /// since the viewer last heard it.
    mutating func statusDue(droppedEvents: Int) -> Bool {
        guard droppedEvents != reportedDrops else { return false }
        reportedDrops = droppedEvents
        return true
    }

    /// Moves the next write's messages from `queue` onto `batch`, in order:
    /// up to the batch's bounds, and, unless stopping, only those that need
    /// not wait for a fold. Returns the flow events dropped on the way.
    static func takeBatch(from queue: inout PendingQueue, into batch: inout [PendingQueue.Taken], now: UInt64, isStopping: Bool) -> Int {
        var dropped = 0, bytes = 0
        while batch.count < batchMessages, bytes < batchBytes,
              isStopping || queue.holdBeforeNext(now: now) == 0 {
            let queuedBytes = queue.bytes
            let count = batch.count
            dropped += queue.next(into: &batch)
            guard batch.count > count else { break }
            bytes += queuedBytes - queue.bytes
        }
        return dropped
    }
}
