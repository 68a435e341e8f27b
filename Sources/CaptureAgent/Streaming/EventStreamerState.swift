import Foundation
import WireProtocol

/// The life of the agent's connection to the viewer, as a value that does
/// no I/O, takes no lock and reads no clock (times come in as arguments).
/// ``EventStreamer`` reports what happened on its socket and carries out
/// the action each call returns, under the one lock that guards this value
/// (the shape of swift-nio's `…StateMachine` beside its handler):
///
/// ```swift
/// var state = EventStreamerState(limits: limits, acceptsControl: false)
/// switch state.writerStarted() {
/// case .connect: …                  // connect, then state.connected() or state.connectFailed()
/// case .retry(let delay): …         // wait (a stop cuts it short), then state.retryWaitEnded()
/// case .exit: return
/// }
/// ```
///
/// Its phases, with the events that move between them:
///
/// ```
///   disconnected ──writerStarted, retryWaitEnded: connect──▶ connecting
///        ▲                                                    │    │ connected: sendHello
///        └──── connectFailed, helloFailed: retry after ───────┘    │ helloSent: awaitAnswer
///              the backoff, which doubles                          ▼
///                                                            awaitingAnswer
///                                                                  │ answered: serve
///                                                                  ▼
///   connecting ◀── connectionClosed ◀── close ◀── viewerClosed, writeFailed ── serving
///
///   stopRequested ──▶ stopping (from awaitingAnswer once the answer is in): a
///   connection writes what is queued until the deadline, then closes; without
///   one, the writer ends ──▶ stopped
/// ```
///
/// It also holds everything else the lock guards: the ``PendingQueue``,
/// the ``WriterSchedule`` that runs the write loop while serving, and the
/// agent's counters. Drops are counted here wherever they happen: events
/// submitted while no viewer is connected, events the queue gives way, a
/// failed write's events, what a departed viewer never confirmed, and what
/// is still queued when a connection ends. The first `status` of each
/// connection reports them all.
struct EventStreamerState {
    /// Where the connection is. Stopping is a phase of its own, so no flag
    /// beside it can disagree; a stop asked for while the viewer's answer is
    /// awaited rides along until the answer is in.
    enum Phase: Equatable {
        /// No connection and no attempt under way: before the writer starts
        /// and while it waits to retry. The next attempt waits `backoff` if it fails.
        case disconnected(backoff: TimeInterval)
        /// An attempt is under way: connecting, then hello and status.
        case connecting(backoff: TimeInterval)
        /// Hello and status went out on `socket`; the writer reads the
        /// viewer's protocol version and rules. Events are queued.
        case awaitingAnswer(socket: Int32, stopDeadline: UInt64?)
        /// Writing what the app sends, as the ``WriterSchedule`` decides.
        case serving(socket: Int32)
        /// The app stopped the agent; new events are refused. On a
        /// connection (`socket`), what is queued is written until
        /// `deadline` (monotonic nanoseconds), then it closes; without one
        /// the writer ends at its next step.
        case stopping(deadline: UInt64, socket: Int32?)
        /// The writer has ended.
        case stopped
    }

    /// What the writer does next with no connection in hand.
    enum Action: Equatable {
        /// Connect now, then ``connected()`` or ``connectFailed()``.
        case connect
        /// Wait this long (a stop cuts it short), then ``retryWaitEnded()``.
        case retry(after: TimeInterval)
        /// End the writer thread.
        case exit
    }

    /// What the writer does next with the connection it holds.
    enum ConnectionAction: Equatable {
        /// Write `hello`, then this status, in one write; then
        /// ``helloSent(socket:)`` or ``helloFailed()``.
        case sendHello(AgentStatus)
        /// Read what the viewer sends for at most this long, until its
        /// first receipt; then ``answered(frameVersion:)``.
        case awaitAnswer(timeout: TimeInterval)
        /// Run the write loop (``nextStep(now:frameVersion:)``) until the connection ends.
        case serve
        /// End the connection this way, then ``connectionClosed(unreadEvents:)``.
        case close(Closing)
        /// Let the socket go without a word (nothing reached the viewer,
        /// or the write of the hello failed), then do this.
        case abandon(then: Action)
    }

    /// How a connection ends.
    enum Closing: Equatable {
        /// We close: the viewer can still read what we wrote, so wait for it to close its side.
        case goodbye
        /// The viewer is gone: read the receipts it left, and count what it never confirmed.
        case viewerGone
    }

    /// What ``EventStreamer/submit(_:)`` does with an event.
    enum Admission: Equatable {
        /// Queue it (``enqueue(_:at:)``) and wake the writer.
        case queue
        /// No viewer is connected: a flow event is only counted (``notSent(_:)``).
        case count
        /// The agent is stopping: refused, uncounted.
        case refuse
    }

    /// A failed attempt waits this long before the next, doubling to
    /// ``maximumBackoff``; a connection made starts again from the first.
    static let initialBackoff: TimeInterval = 0.1
    static let maximumBackoff: TimeInterval = 2
    /// How long a new connection waits for the viewer's answer (its
    /// version, then its first receipt): netinspect answers within a
    /// loopback round trip; a viewer that never sends receipts should not
    /// hold the first write back longer than this. An agent that accepts
    /// control waits longer, for rules that may carry map-local files.
    static let versionAnswerWait: TimeInterval = 0.05
    static let rulesAnswerWait: TimeInterval = 1
    /// A stop's timeout is capped so that its deadline cannot overflow the clock: a day is forever here.
    static let longestStop: TimeInterval = 86_400

    private(set) var phase = Phase.disconnected(backoff: initialBackoff)
    /// What waits to be written; emptied whenever a connection ends (a
    /// restarted viewer would not know those events' flows).
    private(set) var queue: PendingQueue
    /// When to write, wait and close while serving.
    private var schedule = WriterSchedule()
    /// The agent's counters; the queue's figures are the queue's own (``currentStatistics``).
    private var statistics = CaptureAgent.Statistics()
    /// Listener processes already reported as another user's.
    private var refusedListenerPIDs: Set<Int32> = []
    /// Attempts that are over: failed, or connected and answered.
    private(set) var finishedAttempts = 0
    /// The agent accepts the viewer's rules, so it waits longer for them.
    private let acceptsControl: Bool

    init(limits: EventStreamer.Limits, acceptsControl: Bool) {
        queue = PendingQueue(limits: limits)
        self.acceptsControl = acceptsControl
    }

    // MARK: - Reading

    /// Whether a connection to the viewer is up (its hello went out, and it has not closed).
    var isConnected: Bool {
        switch phase {
        case .awaitingAnswer, .serving, .stopping(_, .some): true
        case .disconnected, .connecting, .stopping(_, .none), .stopped: false
        }
    }

    /// Whether the viewer connected reads protocol version 2, so `bodyPart`
    /// events may go to it (a version-1 viewer gets bodies whole with `flowFinished`).
    var readsBodyParts: Bool { isConnected && queue.foldsLaterEvents }

    /// Whether the app has stopped the agent (so a wait to retry is skipped, and a batch waits for no fold).
    var isStopping: Bool {
        switch phase {
        case .stopping, .awaitingAnswer(_, .some), .stopped: true
        case .disconnected, .connecting, .awaitingAnswer(_, .none), .serving: false
        }
    }

    /// Whether the writer's first attempt is over, so the app's first events find the viewer it reached.
    var firstAttemptIsOver: Bool { finishedAttempts > 0 || phase == .stopped }

    /// The counters, with the queue's figures read from the queue.
    var currentStatistics: CaptureAgent.Statistics {
        var current = statistics
        current.queuedEvents = queue.count
        current.queuedBytes = queue.bytes
        current.peakQueuedEvents = queue.peakCount
        current.peakQueuedBytes = queue.peakBytes
        current.eventsWithBodiesCut = queue.cutMessages
        return current
    }

    // MARK: - The app's events

    /// What becomes of an event the app submits now.
    var admission: Admission {
        switch phase {
        case .awaitingAnswer(_, .none), .serving: .queue
        case .disconnected, .connecting: .count
        case .awaitingAnswer(_, .some), .stopping, .stopped: .refuse
        }
    }

    /// Queues `message`, submitted at `now`, counting what the queue gives way for it.
    mutating func enqueue(_ message: __owned Message, at now: UInt64) {
        statistics.droppedEvents += queue.submit(consume message, at: now)
    }

    /// `message` was not sent, as no viewer is connected: counted when it is a flow's event.
    mutating func notSent(_ message: borrowing Message) {
        if message.isFlowEvent { statistics.droppedEvents += 1 }
    }

    /// Events dropped before they were built (no viewer connected).
    mutating func dropped(_ count: Int) {
        statistics.droppedEvents += count
    }

    /// The app stops the agent at `now` (monotonic nanoseconds), giving
    /// what is queued `timeout` seconds to go out.
    mutating func stopRequested(now: UInt64, timeout: TimeInterval) {
        let deadline = now + UInt64(min(max(0, timeout), Self.longestStop) * 1e9)
        switch phase {
        case .disconnected, .connecting, .stopping(_, .none):
            phase = .stopping(deadline: deadline, socket: nil)
        case .awaitingAnswer(let socket, _):
            phase = .awaitingAnswer(socket: socket, stopDeadline: deadline)
        case .serving(let socket), .stopping(_, .some(let socket)):
            phase = .stopping(deadline: deadline, socket: socket)
        case .stopped:
            break
        }
    }

    /// The socket to shut down once ``stopRequested(now:timeout:)`` has
    /// waited its time and the writer has not ended: it is stuck in `send`
    /// to a viewer that does not read.
    var socketToShutDown: Int32? {
        switch phase {
        case .awaitingAnswer(let socket, _), .serving(let socket), .stopping(_, .some(let socket)): socket
        case .disconnected, .connecting, .stopping(_, .none), .stopped: nil
        }
    }

    // MARK: - Connecting

    /// The writer thread has started.
    mutating func writerStarted() -> Action { attemptOrEnd() }

    /// The wait before the next attempt is over, by its time or by a stop.
    mutating func retryWaitEnded() -> Action { attemptOrEnd() }

    private mutating func attemptOrEnd() -> Action {
        guard case .disconnected(let backoff) = phase else { return end() }
        phase = .connecting(backoff: backoff)
        return .connect
    }

    /// The listener is another user's process, `pid`: counted; returns
    /// whether to say so, which is once per listener process. The attempt
    /// has failed (``connectFailed()`` follows).
    mutating func listenerRefused(pid: Int32) -> Bool {
        statistics.refusedListeners += 1
        return refusedListenerPIDs.insert(pid).inserted
    }

    /// The attempt made no connection.
    mutating func connectFailed() -> Action {
        finishedAttempts += 1
        guard case .connecting(let backoff) = phase else { return end() }
        phase = .disconnected(backoff: min(backoff * 2, Self.maximumBackoff))
        return .retry(after: backoff)
    }

    /// The attempt connected a socket. Its first `status` reports every
    /// drop so far; the write loop's later ones report changes from it.
    mutating func connected() -> ConnectionAction {
        // Stopped during the attempt: the viewer has heard nothing yet, and there is nothing to send it.
        guard case .connecting = phase else { return .abandon(then: end()) }
        schedule.connected(reportedDrops: statistics.droppedEvents)
        return .sendHello(AgentStatus(droppedEvents: statistics.droppedEvents, queuedEvents: 0))
    }

    /// The hello and status could not be written: the attempt failed.
    mutating func helloFailed() -> ConnectionAction { .abandon(then: connectFailed()) }

    /// The hello and status went out on `socket`: the app's events are queued from now on.
    mutating func helloSent(socket: Int32) -> ConnectionAction {
        statistics.connections += 1
        statistics.framesWritten += 2
        switch phase {
        case .connecting:
            phase = .awaitingAnswer(socket: socket, stopDeadline: nil)
            return .awaitAnswer(timeout: acceptsControl ? Self.rulesAnswerWait : Self.versionAnswerWait)
        case .stopping(let deadline, _):
            // Stopped while the hello went out: nothing is queued, so say goodbye at once.
            phase = .stopping(deadline: deadline, socket: socket)
            return .close(.goodbye)
        case .disconnected, .awaitingAnswer, .serving, .stopped:
            return .close(.goodbye)
        }
    }

    /// The viewer answered (its protocol version, its rules, its first
    /// receipt), or the wait for it ran out. The queue folds a flow's later
    /// events into its start from now on when the viewer reads version 2:
    /// decided before `start()` returns, so the app's first request streams its parts.
    mutating func answered(frameVersion: Int) -> ConnectionAction {
        finishedAttempts += 1
        queue.foldsLaterEvents = frameVersion >= 2
        switch phase {
        case .awaitingAnswer(let socket, .none): phase = .serving(socket: socket)
        case .awaitingAnswer(let socket, .some(let deadline)): phase = .stopping(deadline: deadline, socket: socket)
        case .disconnected, .connecting, .serving, .stopping, .stopped: break
        }
        return .serve
    }
}

// The serving phase: the write loop's steps, asked of the WriterSchedule
// with the stop deadline the phase holds, and how a connection ends.
extension EventStreamerState {
    // MARK: - Serving

    /// What the write loop does now, at `now` (monotonic nanoseconds), for a
    /// viewer that reads `frameVersion` (which its own messages may have
    /// changed since the last step).
    mutating func nextStep(now: UInt64, frameVersion: Int) -> WriterSchedule.Action {
        queue.foldsLaterEvents = frameVersion >= 2
        switch phase {
        case .serving:
            return schedule.next(queue: queue, now: now, stopDeadline: nil)
        case .stopping(let deadline, .some):
            return schedule.next(queue: queue, now: now, stopDeadline: deadline)
        case .disconnected, .connecting, .awaitingAnswer, .stopping(_, .none), .stopped:
            // Not serving: there is nothing to write on.
            return .close
        }
    }

    /// The wait for events ended, by an event (or a stop) or by its timeout.
    mutating func waited(timedOut: Bool) {
        schedule.waited(timedOut: timedOut)
    }

    /// Moves the next write's messages from the queue onto `batch`, counting
    /// the flow events dropped on the way; returns the `status` to write
    /// before them when the drop count changed since the viewer last heard it.
    mutating func takeBatch(into batch: inout [PendingQueue.Taken], now: UInt64) -> AgentStatus? {
        statistics.droppedEvents += WriterSchedule.takeBatch(from: &queue, into: &batch, now: now, isStopping: isStopping)
        let drops = statistics.droppedEvents
        return schedule.statusDue(droppedEvents: drops) ? AgentStatus(droppedEvents: drops, queuedEvents: queue.count) : nil
    }

    /// A write went out: `frames` frames, and `unencodable` flow events that
    /// could not be encoded and so were dropped.
    mutating func wrote(frames: Int, unencodable: Int) {
        statistics.framesWritten += frames
        statistics.droppedEvents += unencodable
    }

    // MARK: - Ending a connection

    /// An idle check found that the viewer has closed its side (or sent
    /// something that is not a stream of its frames).
    mutating func viewerClosed() -> ConnectionAction { .close(.viewerGone) }

    /// A write failed; the `lostEvents` it carried are counted. The viewer
    /// is gone, unless `viewerReadEverything`: a viewer without receipts on
    /// a Unix socket that reset nothing and left nothing unread read every
    /// frame. While stopping, the failure may be `stop()` shutting a stuck
    /// socket down: then the viewer can still read what it holds.
    mutating func writeFailed(lostEvents: Int, viewerReadEverything: Bool) -> ConnectionAction {
        statistics.droppedEvents += lostEvents
        return .close(isStopping || viewerReadEverything ? .goodbye : .viewerGone)
    }

    /// The connection is closed; `unreadEvents` are the events a viewer
    /// that went away never confirmed (``DeliveryLedger``). Events still
    /// queued were meant for that viewer (a restarted one would not know
    /// their flows): dropped, counted. A connection that ends while the
    /// agent runs is followed by a new attempt at once.
    mutating func connectionClosed(unreadEvents: Int) -> Action {
        statistics.droppedEvents += unreadEvents
        statistics.unreadEventsDropped += unreadEvents
        dropQueued()
        switch phase {
        case .awaitingAnswer(_, .none), .serving:
            phase = .connecting(backoff: Self.initialBackoff)
            return .connect
        case .disconnected, .connecting, .awaitingAnswer(_, .some), .stopping, .stopped:
            return end()
        }
    }

    /// The writer ends: whatever is queued is dropped, counted.
    private mutating func end() -> Action {
        phase = .stopped
        dropQueued()
        return .exit
    }

    private mutating func dropQueued() {
        statistics.droppedEvents += queue.removeAll()
        // The next viewer has not said which version it reads yet.
        queue.foldsLaterEvents = false
    }
}
