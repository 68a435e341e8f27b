import Foundation
import WireProtocol

/// Sends the agent's events to the inspector: one socket, one background
/// writer thread, one bounded queue.
///
/// App threads only ever call ``submit(_:)``, which takes a lock for a few
/// instructions and never touches the socket. While no inspector is
/// connected, events are counted as dropped without being encoded, so capture
/// costs next to nothing. The writer sends `hello` then `status` on every
/// new connection; when it writes, waits and reconnects is
/// ``WriterSchedule``'s decision, and what gives way when the queue is full
/// is ``PendingQueue``'s. The queue's figures in ``currentStatistics`` are
/// read from the queue itself.
///
/// When the inspector dies, the events it never confirmed are counted as
/// dropped too (``DeliveryLedger``).
final class EventStreamer: @unchecked Sendable {
    struct Limits: Sendable {
        var maximumEvents: Int
        var maximumBytes: Int
    }

    private let destination: Endpoint
    private let hello: Hello
    private let encoder = FrameEncoder()
    private let condition = NSCondition()

    // Guarded by `condition`.
    private var queue: PendingQueue
    private var isConnected = false
    /// Set by ``stop(timeout:)``: until when the writer may flush, in
    /// monotonic nanoseconds (``now``).
    private var stopDeadline: UInt64?
    private var socketDescriptor: Int32 = -1
    /// The agent's counters; the queue's figures are the queue's own.
    private var statistics = CaptureAgent.Statistics()
    /// Listener processes already reported as another user's.
    private var refusedListenerPIDs: Set<Int32> = []
    private var hasExited = false
    private var hasTriedOnce = false

    // Writer thread only.
    /// When to write, wait and reconnect.
    private var schedule = WriterSchedule()
    /// The current connection's receipts, protocol version and control.
    private var viewer: ViewerInput
    /// The frames of one write, reused for every write.
    private var outgoing: [UInt8] = []
    /// The messages of one write, reused likewise.
    private var batch: [PendingQueue.Taken] = []
    /// The flow events each flow message of the batch stands for (writer thread).
    private var messageEvents: [Int] = []

    /// Monotonic nanoseconds, the clock of the fold window and the stop deadline.
    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
    /// A buffer grown past this by a large body is let go after its write.
    private static let keptBufferCapacity = 1 << 20
    /// How long a new connection waits for the viewer's answer (its
    /// version, then its first receipt): netinspect answers within a
    /// loopback round trip; a viewer that never sends receipts should not
    /// hold the first write back longer than this. An agent that accepts
    /// control waits longer, for rules that may carry map-local files.
    private static let versionAnswerWait: TimeInterval = 0.05
    private static let rulesAnswerWait: TimeInterval = 1
    /// How long closing waits for the inspector to close its side.
    private static let goodbyeTimeout: TimeInterval = 0.2
    private static let connectTimeout: TimeInterval = 1

    /// Where the viewer's rules and replays go, for an agent that accepts
    /// control; nil for one that does not, which then never decodes them.
    /// Called with empty rules whenever a connection ends: rules live only
    /// as long as the viewer that sent them.
    private let control: (@Sendable (ViewerMessage) -> Void)?
    /// Called whenever a connection ends, for an agent that accepts control.
    private let viewerGone: (@Sendable () -> Void)?

    init(destination: Endpoint, hello: Hello, limits: Limits, control: (@Sendable (ViewerMessage) -> Void)? = nil,
         viewerGone: (@Sendable () -> Void)? = nil) {
        self.destination = destination
        self.hello = hello
        queue = PendingQueue(limits: limits)
        self.control = control
        self.viewerGone = viewerGone
        viewer = ViewerInput(seesUnread: false, control: control)
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "netinspect.CaptureAgent.writer"
        thread.start()
    }

    /// Waits until the writer's first connection attempt is over (or
    /// `timeout` passes), so an app that starts the agent and sends at once
    /// does not lose its first events to an inspector that is already listening.
    func waitForFirstAttempt(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        condition.lock()
        while !hasTriedOnce, Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        condition.unlock()
    }

    /// Queues `message` for the inspector. Never blocks on I/O. While no
    /// inspector is connected, a flow event is only counted as dropped.
    ///
    /// The message is moved from the capture path into the queue, never
    /// copied: a copy retains, and its destroy releases, every string and
    /// array of a flow. (`__owned`, not `consuming`: Swift 6.3.1's move
    /// checker crashes on a consuming `Message` that is read before it is
    /// moved.)
    func submit(_ message: __owned Message) {
        condition.lock()
        defer { condition.unlock() }
        guard stopDeadline == nil else { return }
        guard isConnected else {
            if message.isFlowEvent { statistics.droppedEvents += 1 }
            return
        }
        statistics.droppedEvents += queue.submit(consume message, at: Self.now)
        condition.signal()
    }

    /// Counts events dropped before they were built (no inspector connected).
    func countDropped(_ count: Int) {
        condition.lock()
        defer { condition.unlock() }
        statistics.droppedEvents += count
    }

    var currentStatistics: CaptureAgent.Statistics {
        locked {
            var current = statistics
            current.queuedEvents = queue.count
            current.queuedBytes = queue.bytes
            current.peakQueuedEvents = queue.peakCount
            current.peakQueuedBytes = queue.peakBytes
            current.eventsWithBodiesCut = queue.cutMessages
            return current
        }
    }

    /// Whether a connection to the inspector is up.
    var connected: Bool { locked { isConnected } }

    /// Whether a connection is up, and whether its viewer reads version 2
    /// (so `bodyPart` events may go to it: a version-1 viewer gets bodies
    /// whole with `flowFinished`), in one lock.
    var viewerState: (isConnected: Bool, readsBodyParts: Bool) {
        locked { (isConnected, isConnected && queue.foldsLaterEvents) }
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Refuses new events, waits up to `timeout` for the queue to drain,
    /// then closes the connection and ends the writer thread.
    func stop(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        condition.lock()
        // Capped so that no timeout overflows the clock: a day is forever here.
        stopDeadline = Self.now + UInt64(min(max(0, timeout), 86_400) * 1e9)
        condition.broadcast()
        while !hasExited, Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        if !hasExited, socketDescriptor >= 0 {
            // The writer is stuck in `send` to a reader that does not read.
            shutdownSocket(socketDescriptor)
        }
        condition.unlock()
    }

    // MARK: - Writer thread

    private func run() {
        // Every connection ends with the queue emptied: stopping, there is nothing left to flush.
        while !locked({ stopDeadline != nil }) {
            let connection = connect()
            locked {
                hasTriedOnce = true
                condition.broadcast()
            }
            guard let socket = connection else {
                waitBeforeRetry(schedule.connectFailed())
                continue
            }
            serve(socket)
        }
        condition.lock()
        hasExited = true
        isConnected = false
        dropQueued()
        condition.broadcast()
        condition.unlock()
    }

    private func connect() -> EventSocket? {
        let socket: EventSocket
        do {
            socket = try EventSocket(connectingTo: destination, timeout: Self.connectTimeout)
        } catch .foreignListener(let uid, let pid) {
            refuse(uid: uid, pid: pid)
            return nil
        } catch {
            return nil
        }
        do {
            let drops = locked { statistics.droppedEvents }
            viewer = ViewerInput(seesUnread: socket.seesUnread, control: control)
            outgoing.removeAll(keepingCapacity: true)
            try encoder.encode(.hello(hello), appendingTo: &outgoing)
            try encoder.encode(.status(AgentStatus(droppedEvents: drops, queuedEvents: 0)), appendingTo: &outgoing)
            try viewer.write(outgoing, messageEvents: [], on: socket)
            condition.lock()
            socketDescriptor = socket.descriptor
            isConnected = stopDeadline == nil
            schedule.connected(reportedDrops: drops)
            statistics.connections += 1
            statistics.framesWritten += 2
            condition.unlock()
            awaitViewerAnswer(on: socket, timeout: control == nil ? Self.versionAnswerWait : Self.rulesAnswerWait)
            // Before `start()` returns: the app's first request streams its parts.
            locked { queue.foldsLaterEvents = viewer.frameVersion >= 2 }
            return socket
        } catch {
            return nil
        }
    }

    /// A viewer sends the protocol version it reads, then its rules, before
    /// its first receipt, which it sends as soon as it accepts the hello.
    /// Reading up to that receipt before `start()` returns puts both in
    /// force for the app's very first request: its rules, and its body
    /// parts (a stream that was the app's first request otherwise went out
    /// whole until the first idle check read the switch, ``WriterSchedule``).
    /// Bounded: `start()` waits at most `initialConnectionWait`, and a
    /// viewer that sends nothing costs this thread `timeout`.
    private func awaitViewerAnswer(on socket: borrowing EventSocket, timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        while viewer.ledger.acknowledged == nil {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, socket.waitForIncoming(timeout: remaining), viewer.read(from: socket) else { return }
        }
    }

    /// Counts a listener of another user and says so on stderr, once per
    /// listener process: the app's owner should know why nothing arrives.
    private func refuse(uid: UInt32, pid: Int32) {
        let first = locked { () -> Bool in
            statistics.refusedListeners += 1
            return refusedListenerPIDs.insert(pid).inserted
        }
        guard first else { return }
        let message = "netinspect CaptureAgent: not sending to \(destination): the process listening there (pid \(pid)) "
            + "runs as uid \(uid), not as this app's uid \(geteuid()) or root. Nothing was sent; the agent keeps trying.\n"
        FileHandle.standardError.write(Data(message.utf8))
    }

    private func waitBeforeRetry(_ delay: TimeInterval) {
        condition.lock()
        if stopDeadline == nil { _ = condition.wait(until: Date().addingTimeInterval(delay)) }
        condition.unlock()
    }

    /// Writes queued events until the connection fails or the agent stops:
    /// does what the schedule says, holding the lock only to look at and
    /// take from the queue.
    private func serve(_ socket: borrowing EventSocket) {
        condition.lock()
        while true {
            queue.foldsLaterEvents = viewer.frameVersion >= 2
            let now = Self.now
            switch schedule.next(queue: queue, now: now, stopDeadline: stopDeadline) {
            case .waitForEvents(let seconds):
                schedule.waited(timedOut: !condition.wait(until: Date().addingTimeInterval(seconds)))
            case .checkViewer:
                condition.unlock()
                // Sampled before the check: once the peer is gone the charge reads 0.
                viewer.observeUnread(on: socket)
                guard viewer.read(from: socket) else { return disconnect(lostEvents: 0, peerIsGone: true, socket: socket) }
                condition.lock()
            case .pause(let microseconds):
                condition.unlock()
                usleep(microseconds)
                condition.lock()
            case .close:
                condition.unlock()
                // We close; the inspector can still read what we wrote.
                return disconnect(lostEvents: 0, peerIsGone: false, socket: socket)
            case .write:
                batch.removeAll(keepingCapacity: true)
                statistics.droppedEvents += WriterSchedule.takeBatch(from: &queue, into: &batch, now: now, isStopping: stopDeadline != nil)
                let drops = statistics.droppedEvents
                let status = schedule.statusDue(droppedEvents: drops) ? AgentStatus(droppedEvents: drops, queuedEvents: queue.count) : nil
                guard !batch.isEmpty || status != nil else { continue }
                condition.unlock()
                guard let written = write(status: status, on: socket) else { return }
                condition.lock()
                statistics.framesWritten += written.frames
                statistics.droppedEvents += written.unencodable
            }
        }
    }

    /// Encodes the batch, after `status` if one is due, and sends it in one
    /// write; nil once the write failed and the connection is down.
    private func write(status: AgentStatus?, on socket: borrowing EventSocket) -> (frames: Int, unencodable: Int)? {
        outgoing.removeAll(keepingCapacity: true)
        if let status {
            _ = FrameFitting.append(.status(status), to: &outgoing, encoder: encoder, version: viewer.frameVersion)
        }
        messageEvents.removeAll(keepingCapacity: true)
        let encoded = FrameFitting.append(batch, to: &outgoing, messageEvents: &messageEvents,
                                          encoder: encoder, version: viewer.frameVersion)
        do throws(EventSocket.Failure) {
            try viewer.write(outgoing, messageEvents: messageEvents, on: socket)
        } catch {
            writeFailed(error, lostEvents: encoded.flowEvents + encoded.unencodable, socket: socket)
            return nil
        }
        if outgoing.capacity > Self.keptBufferCapacity { outgoing = [] }
        return (encoded.frames + (status == nil ? 0 : 1), encoded.unencodable)
    }

    /// While stopping, the failure may be `stop()` shutting a stuck socket
    /// down: then the inspector can still read what it holds. Otherwise the
    /// inspector is gone, and what it never confirmed counts, with one
    /// exception: a Unix socket without ECONNRESET tells that a
    /// receipt-less inspector had read every frame. Over TCP no errno tells
    /// that (a peer that read everything, then died, leaves EPIPE), so it
    /// always counts. Receipts it sent before it went may still wait in our
    /// receive buffer, unread because this thread was blocked in `send` (a
    /// slow inspector fills the socket before 32 events are written): read
    /// them first, or a receipt-less look would take EPIPE as "read
    /// everything" and lose what it had read but not yet shown, uncounted.
    private func writeFailed(_ error: EventSocket.Failure, lostEvents: Int, socket: borrowing EventSocket) {
        _ = viewer.read(from: socket)
        let leftUnread = error == .system(call: "send", errno: ECONNRESET) || socket.peerLeftUnreadData()
        let peerIsGone = !locked { stopDeadline != nil } && (leftUnread || viewer.ledger.acknowledged != nil || !socket.seesUnread)
        disconnect(lostEvents: lostEvents, peerIsGone: peerIsGone, socket: socket)
    }

    /// Marks the connection down. Events still queued were meant for that
    /// inspector (a restarted one would not know their flows): drop them.
    /// When the inspector went away with frames it had not read
    /// (`peerIsGone`), their events are lost too.
    private func disconnect(lostEvents: Int, peerIsGone: Bool, socket: borrowing EventSocket) {
        var unreadEvents = 0
        if peerIsGone {
            // Receipts it sent before dying are still in our receive buffer.
            _ = viewer.read(from: socket)
            unreadEvents = viewer.ledger.unconfirmedEvents
        } else {
            socket.finishGracefully(timeout: Self.goodbyeTimeout)
        }
        // The viewer's rules and breakpoints go with it; requests from now on are the app's own.
        viewerGone?()
        condition.lock()
        isConnected = false
        socketDescriptor = -1
        statistics.droppedEvents += lostEvents + unreadEvents
        statistics.unreadEventsDropped += unreadEvents
        dropQueued()
        condition.unlock()
    }

    /// Drops what is queued, counted; under `condition`.
    private func dropQueued() {
        statistics.droppedEvents += queue.removeAll()
        // The next viewer has not said which version it reads yet.
        queue.foldsLaterEvents = false
    }
}
