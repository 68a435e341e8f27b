import Foundation
import WireProtocol

/// Sends the agent's events to the inspector: one socket, one background
/// writer thread, one bounded queue.
///
/// App threads only ever call ``submit(_:)``, which takes a lock for a few
/// instructions and never touches the socket. While no inspector is
/// connected, events are counted as dropped without being encoded, so capture
/// costs next to nothing. The writer connects with backoff (100 ms doubling
/// to 2 s), sends `hello` then `status` on every new connection, and before
/// each event sends a `status` whenever the cumulative drop count changed.
/// What gives way when the queue is full is ``PendingQueue``'s decision.
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
    private var isStopping = false
    private var flushDeadline: Date?
    private var socketDescriptor: Int32 = -1
    private var reportedDrops = 0
    private var statistics = CaptureAgent.Statistics()
    /// Listener processes already reported as another user's.
    private var refusedListenerPIDs: Set<Int32> = []
    private var hasExited = false
    private var hasTriedOnce = false

    // Writer thread only.
    /// The current connection's receipts, protocol version and control.
    private var viewer: ViewerInput
    /// The frames of one write, reused for every write.
    private var outgoing: [UInt8] = []
    /// The messages of one write, reused likewise.
    private var batch: [PendingQueue.Taken] = []
    /// The flow events each flow message of the batch stands for (writer thread).
    private var messageEvents: [Int] = []
    /// One write carries at most this many messages or (but for one large
    /// message) bytes: under load a handful of system calls carry what
    /// would take hundreds, yet the inspector still gets a steady stream.
    private static let batchMessages = 64
    private static let batchBytes = 256 * 1024
    /// How long the writer, woken from idle by an event, waits for more
    /// before it writes. Waking for every event cost a wakeup, a `send`, and
    /// on the inspector's side a read, a drain, a print and a receipt: half
    /// of all the CPU time of both processes went to the kernel at 5,000
    /// events a second. A millisecond gathers the events of a few requests
    /// into one write; the inspector shows a flow a millisecond later.
    private static let coalescingDelayMicroseconds: UInt32 = 1000
    /// How long a flow's start waits in the queue, at most, for its later
    /// events to fold into it while the viewer reads version 2
    /// (``PendingQueue``): a flow that ends within it costs one frame,
    /// encoded, sent, decoded and acknowledged, instead of two or three.
    /// The inspector shows a flow up to this much later.
    static let foldWindowNanoseconds: UInt64 = 5_000_000

    /// Monotonic nanoseconds, for the fold window.
    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
    /// A buffer grown past this by a large body is let go after its write.
    private static let keptBufferCapacity = 1 << 20
    /// How long closing waits for the inspector to close its side.
    private static let goodbyeTimeout: TimeInterval = 0.2

    private static let initialBackoff: TimeInterval = 0.1
    private static let maximumBackoff: TimeInterval = 2
    private static let idleCheckInterval: TimeInterval = 0.2
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
        guard !isStopping else { return }
        guard isConnected else {
            if message.isFlowEvent { statistics.droppedEvents += 1 }
            return
        }
        statistics.droppedEvents += queue.submit(consume message, at: Self.now)
        statistics.eventsWithBodiesCut = queue.cutMessages
        statistics.queuedBytes = queue.bytes
        statistics.queuedEvents = queue.count
        statistics.peakQueuedBytes = max(statistics.peakQueuedBytes, statistics.queuedBytes)
        statistics.peakQueuedEvents = max(statistics.peakQueuedEvents, statistics.queuedEvents)
        condition.signal()
    }

    /// Counts events dropped before they were built (no inspector connected).
    func countDropped(_ count: Int) {
        condition.lock()
        defer { condition.unlock() }
        statistics.droppedEvents += count
    }

    var currentStatistics: CaptureAgent.Statistics { locked { statistics } }

    /// Whether a connection to the inspector is up.
    var connected: Bool { locked { isConnected } }

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
        isStopping = true
        flushDeadline = deadline
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
        var backoff = Self.initialBackoff
        while !shouldExit() {
            let connection = connect()
            locked {
                hasTriedOnce = true
                condition.broadcast()
            }
            guard let socket = connection else {
                waitBeforeRetry(backoff)
                backoff = min(backoff * 2, Self.maximumBackoff)
                continue
            }
            backoff = Self.initialBackoff
            serve(socket)
        }
        condition.lock()
        hasExited = true
        isConnected = false
        dropQueued()
        condition.broadcast()
        condition.unlock()
    }

    private func shouldExit() -> Bool {
        locked { isStopping && (queue.isEmpty || Date() >= (flushDeadline ?? .distantPast) || !isConnected) }
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
            isConnected = !isStopping
            reportedDrops = drops
            statistics.connections += 1
            statistics.framesWritten += 2
            condition.unlock()
            if control != nil { awaitViewerRules(on: socket) }
            return socket
        } catch {
            return nil
        }
    }

    /// A viewer sends its rules before its first receipt, which it sends as
    /// soon as it accepts the hello. Reading up to that receipt before
    /// `start()` returns puts the rules in force for the app's very first
    /// request (bounded: `start()` waits at most `initialConnectionWait`,
    /// and a viewer that sends nothing costs this thread a second).
    private func awaitViewerRules(on socket: borrowing EventSocket) {
        let deadline = Date().addingTimeInterval(1)
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
        if !isStopping { _ = condition.wait(until: Date().addingTimeInterval(delay)) }
        condition.unlock()
    }

    /// Writes queued events until the connection fails or the agent stops.
    private func serve(_ socket: borrowing EventSocket) {
        while true {
            condition.lock()
            let wasIdle = queue.isEmpty
            while queue.isEmpty, !isStopping {
                if !condition.wait(until: Date().addingTimeInterval(Self.idleCheckInterval)), queue.isEmpty {
                    condition.unlock()
                    // Sampled before the check: once the peer is gone the charge reads 0.
                    viewer.observeUnread(on: socket)
                    if !viewer.read(from: socket) { return disconnect(lostEvents: 0, peerIsGone: true, socket: socket) }
                    condition.lock()
                }
            }
            if wasIdle, !isStopping, queue.count < Self.batchMessages {
                // Woken by the first event after a pause: let the events
                // just behind it join the same write (see coalescingDelay).
                condition.unlock()
                usleep(Self.coalescingDelayMicroseconds)
                condition.lock()
            }
            if queue.isEmpty || (isStopping && Date() >= (flushDeadline ?? .distantPast)) {
                condition.unlock()
                // We close; the inspector can still read what we wrote.
                return disconnect(lostEvents: 0, peerIsGone: false, socket: socket)
            }
            queue.foldsLaterEvents = viewer.frameVersion >= 2
            let now = Self.now
            if !isStopping, case let hold = queue.holdBeforeNext(now: now, window: Self.foldWindowNanoseconds), hold > 0 {
                // The front flow may still end: give its events the rest of the window to fold in.
                condition.unlock()
                usleep(UInt32(min(hold / 1000 + 1, Self.foldWindowNanoseconds / 1000)))
                continue
            }
            batch.removeAll(keepingCapacity: true)
            var batchBytes = 0
            while batch.count < Self.batchMessages, batchBytes < Self.batchBytes,
                  isStopping || queue.holdBeforeNext(now: now, window: Self.foldWindowNanoseconds) == 0 {
                let queuedBytes = queue.bytes
                let count = batch.count
                statistics.droppedEvents += queue.next(into: &batch)
                guard batch.count > count else { break }
                batchBytes += queuedBytes - queue.bytes
            }
            statistics.queuedBytes = queue.bytes
            statistics.queuedEvents = queue.count
            let drops = statistics.droppedEvents
            let statusDue = drops != reportedDrops
            reportedDrops = drops
            let queued = queue.count
            condition.unlock()
            guard !batch.isEmpty || statusDue else { continue }

            outgoing.removeAll(keepingCapacity: true)
            if statusDue {
                _ = FrameFitting.append(.status(AgentStatus(droppedEvents: drops, queuedEvents: queued)), to: &outgoing,
                                        encoder: encoder, version: viewer.frameVersion)
            }
            messageEvents.removeAll(keepingCapacity: true)
            let encoded = FrameFitting.append(batch, to: &outgoing, messageEvents: &messageEvents,
                                              encoder: encoder, version: viewer.frameVersion)
            do throws(EventSocket.Failure) {
                try viewer.write(outgoing, messageEvents: messageEvents, on: socket)
                locked {
                    statistics.framesWritten += encoded.frames + (statusDue ? 1 : 0)
                    statistics.droppedEvents += encoded.unencodable
                }
                if outgoing.capacity > Self.keptBufferCapacity { outgoing = [] }
            } catch {
                // While stopping, the failure may be `stop()` shutting a stuck
                // socket down: then the inspector can still read what it holds.
                // Otherwise the inspector is gone, and what it never confirmed
                // counts, with one exception: a Unix socket without
                // ECONNRESET tells that a receipt-less inspector had read
                // every frame. Over TCP no errno tells that (a peer that read
                // everything, then died, leaves EPIPE), so it always counts.
                // Receipts it sent before it went may still wait in our
                // receive buffer, unread because this thread was blocked in
                // `send` (a slow inspector fills the socket before 32 events
                // are written): read them first, or a receipt-less look
                // would take EPIPE as "read everything" and lose what it
                // had read but not yet shown, uncounted.
                _ = viewer.read(from: socket)
                let leftUnread = error == .system(call: "send", errno: ECONNRESET) || socket.peerLeftUnreadData()
                let peerIsGone = !locked { isStopping } && (leftUnread || viewer.ledger.acknowledged != nil || !socket.seesUnread)
                return disconnect(lostEvents: encoded.flowEvents + encoded.unencodable, peerIsGone: peerIsGone, socket: socket)
            }
        }
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
        statistics.queuedBytes = 0
        statistics.queuedEvents = 0
    }
}
