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
/// When the queue holds too many events or bytes, the oldest are dropped.
///
/// When the inspector dies, the events it never took are counted as
/// dropped too: the events written on the connection minus the count of
/// its last ``Receipt``. An inspector that sends no receipts (older than
/// receipts) leaves the kernel's view: on a Unix socket, the frames it had
/// not read (see ``UnreadFrames``); over TCP, nothing.
final class EventStreamer: @unchecked Sendable {
    struct Limits: Sendable {
        var maximumEvents: Int
        var maximumBytes: Int
    }

    struct Pending {
        var message: Message
        var cost: Int
    }

    private let destination: Endpoint
    private let hello: Hello
    private let limits: Limits
    private let encoder = FrameEncoder()
    private let condition = NSCondition()

    // Guarded by `condition`.
    private var queue = FIFO<Pending>()
    /// Flows whose `flowStarted` was queued on the current connection and
    /// whose `flowFinished` was not yet (see `submit`). Under `condition`.
    private var flowsStartedHere = Set<FlowID>()
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
    private var unread = UnreadFrames()
    /// The current connection's receipts: events written on it, the
    /// inspector's count (nil until its first receipt), and the decoder.
    private var written = 0
    private var acknowledged: Int?
    private var receipts: ViewerMessageDecoder
    private var writesSinceRead = 0
    /// Receipts are read at idle checks and every this many writes, so that
    /// under steady load they neither pile up nor go stale.
    private static let writesPerReceiptRead = 32
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

    /// Receipts are tiny; rules may carry map-local files.
    private var viewerFrameLimit: Int { control == nil ? 64 * 1024 : 16 * 1024 * 1024 }

    init(destination: Endpoint, hello: Hello, limits: Limits, control: (@Sendable (ViewerMessage) -> Void)? = nil,
         viewerGone: (@Sendable () -> Void)? = nil) {
        self.destination = destination
        self.hello = hello
        self.limits = limits
        self.control = control
        self.viewerGone = viewerGone
        self.receipts = ViewerMessageDecoder(maximumFrameSize: control == nil ? 64 * 1024 : 16 * 1024 * 1024, acceptsRules: control != nil)
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

    /// Queues `message` for the inspector. Never blocks on I/O.
    ///
    /// A flow's later events go only where its `flowStarted` went: if that
    /// was dropped (no inspector, a full queue) or went to an earlier
    /// connection, they are dropped and counted too. An inspector that got
    /// them would discard them as belonging to no flow it knows, and
    /// acknowledge them, so they would be lost without being counted.
    func submit(_ message: Message) {
        condition.lock()
        defer { condition.unlock() }
        guard !isStopping else { return }
        guard isConnected else {
            if message.isFlowEvent { statistics.droppedEvents += 1 }
            return
        }
        switch message {
        case .flowStarted(let log):
            flowsStartedHere.insert(log.id)
        case .flowResponse(let event) where !flowsStartedHere.contains(event.id):
            statistics.droppedEvents += 1
            return
        case .flowFinished(let event):
            guard flowsStartedHere.remove(event.id) != nil else {
                statistics.droppedEvents += 1
                return
            }
        case .held(let hold) where !flowsStartedHere.contains(hold.id):
            return
        case .released(let release) where !flowsStartedHere.contains(release.id):
            return
        default:
            break
        }
        queue.append(Pending(message: message, cost: message.estimatedFrameSize))
        statistics.queuedBytes += queue[queue.count - 1].cost
        while queue.count > limits.maximumEvents || (statistics.queuedBytes > limits.maximumBytes && queue.count > 1) {
            let dropped = queue.removeFirst()
            statistics.queuedBytes -= dropped.cost
            guard dropped.message.isFlowEvent else { continue }
            statistics.droppedEvents += 1
            switch dropped.message {
            case .flowStarted(let log): flowsStartedHere.remove(log.id)
            case .flowFinished(let event): flowsStartedHere.remove(event.id)
            default: break
            }
        }
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
        statistics.droppedEvents += queue.flowEventCount
        queue.removeAll()
        flowsStartedHere.removeAll()
        statistics.queuedBytes = 0
        statistics.queuedEvents = 0
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
            unread.reset()
            written = 0
            acknowledged = nil
            receipts = ViewerMessageDecoder(maximumFrameSize: viewerFrameLimit, acceptsRules: control != nil)
            writesSinceRead = 0
            try write(encoder.encode(.hello(hello)), events: 0, on: socket)
            try write(encoder.encode(.status(AgentStatus(droppedEvents: drops, queuedEvents: 0))), events: 0, on: socket)
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
        while acknowledged == nil {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, socket.waitForIncoming(timeout: remaining), readReceipts(from: socket) else { return }
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
            while queue.isEmpty, !isStopping {
                if !condition.wait(until: Date().addingTimeInterval(Self.idleCheckInterval)), queue.isEmpty {
                    condition.unlock()
                    // Sampled before the check: once the peer is gone the charge reads 0.
                    if let charge = socket.unreadCharge() { unread.observe(charge: charge) }
                    if !readReceipts(from: socket) { return disconnect(lostEvent: false, peerIsGone: true, socket: socket) }
                    condition.lock()
                }
            }
            if queue.isEmpty || (isStopping && Date() >= (flushDeadline ?? .distantPast)) {
                condition.unlock()
                // We close; the inspector can still read what we wrote.
                return disconnect(lostEvent: false, peerIsGone: false, socket: socket)
            }
            let next = queue.removeFirst()
            statistics.queuedBytes -= next.cost
            statistics.queuedEvents = queue.count
            let drops = statistics.droppedEvents
            let statusDue = drops != reportedDrops
            reportedDrops = drops
            let queued = queue.count
            condition.unlock()

            do {
                if statusDue {
                    try write(encoder.encode(.status(AgentStatus(droppedEvents: drops, queuedEvents: queued))), events: 0, on: socket)
                }
                if let frame = FrameFitting.frame(for: next.message, encoder: encoder) {
                    try write(frame, events: next.message.isFlowEvent ? 1 : 0, on: socket)
                }
                locked { statistics.framesWritten += statusDue ? 2 : 1 }
            } catch {
                // While stopping, the failure may be `stop()` shutting a stuck
                // socket down: then the inspector can still read what it holds.
                // Without ECONNRESET the inspector had read every frame.
                // With receipts, any broken connection counts what was not taken.
                let leftUnread = error as? EventSocket.Failure == .system(call: "send", errno: ECONNRESET) || socket.peerLeftUnreadData()
                return disconnect(lostEvent: true, peerIsGone: !locked { isStopping } && (leftUnread || acknowledged != nil), socket: socket)
            }
        }
    }

    /// Sends one frame and counts its events as written on this connection;
    /// reads receipts every few writes. Until the inspector has sent a
    /// receipt, on a Linux Unix socket, also notes the frame among the
    /// unread frames with the charge it added.
    private func write(_ frame: Data, events: Int, on socket: borrowing EventSocket) throws(EventSocket.Failure) {
        if socket.seesUnread, acknowledged == nil {
            let before = socket.unreadCharge()
            try socket.send(frame)
            let after = socket.unreadCharge()
            unread.wrote(bytes: frame.count, events: events, chargeBefore: before, chargeAfter: after)
        } else {
            try socket.send(frame)
        }
        written += events
        writesSinceRead += 1
        if writesSinceRead >= Self.writesPerReceiptRead { _ = readReceipts(from: socket) }
    }

    /// Takes in every receipt the inspector has sent; false once the peer
    /// has closed (or sent something that is not a receipt stream).
    private func readReceipts(from socket: borrowing EventSocket) -> Bool {
        writesSinceRead = 0
        while true {
            switch socket.receive() {
            case .nothing:
                return true
            case .closed:
                return false
            case .bytes(let bytes):
                receipts.append(contentsOf: bytes)
                do {
                    while let message = try receipts.next() {
                        switch message {
                        case .receipt(let receipt):
                            acknowledged = max(acknowledged ?? 0, min(receipt.events, written))
                        default:
                            control?(message)
                        }
                    }
                } catch {
                    return false
                }
            }
        }
    }

    /// Marks the connection down. Events still queued were meant for that
    /// inspector (a restarted one would not know their flows): drop them.
    /// When the inspector went away with frames it had not read
    /// (`peerIsGone`), their events are lost too.
    private func disconnect(lostEvent: Bool, peerIsGone: Bool, socket: borrowing EventSocket) {
        var unreadEvents = 0
        if peerIsGone {
            // Receipts it sent before dying are still in our receive buffer.
            _ = readReceipts(from: socket)
            unreadEvents = acknowledged.map { written - $0 } ?? unread.events
        } else {
            socket.finishGracefully(timeout: Self.goodbyeTimeout) { bytes in
                receipts.append(contentsOf: bytes)
            }
        }
        unread.reset()
        // The viewer's rules and breakpoints go with it; requests from now on are the app's own.
        viewerGone?()
        condition.lock()
        isConnected = false
        socketDescriptor = -1
        statistics.droppedEvents += queue.flowEventCount + (lostEvent ? 1 : 0) + unreadEvents
        statistics.unreadEventsDropped += unreadEvents
        queue.removeAll()
        // Flows started on this connection end on no other (see `submit`).
        flowsStartedHere.removeAll()
        statistics.queuedBytes = 0
        statistics.queuedEvents = 0
        condition.unlock()
    }
}

// MARK: - Sizes

extension Message {
    /// A cheap upper-bound guess of the encoded frame size: base64 bodies
    /// plus a fixed allowance for the rest. Used to bound the queue without
    /// encoding on the app's threads.
    var estimatedFrameSize: Int {
        1024 + bodies.reduce(0) { $0 + ($1.data.count + 2) / 3 * 4 }
    }

    /// The captured bodies this message carries.
    var bodies: [CapturedBody] {
        switch self {
        case .flowStarted(let log):
            return [log.request.body, log.response?.body].compactMap { $0 }
        case .flowFinished(let event):
            return [event.requestBody, event.response?.body].compactMap { $0 }
        case .held(let hold):
            return [hold.response?.body].compactMap { $0 }
        case .hello, .flowResponse, .status, .released:
            return []
        }
    }

    /// The same message with every body cut to at most `limit` bytes; a cut
    /// body keeps its full size and is marked truncated.
    func cuttingBodies(to limit: Int) -> Message {
        func cut(_ body: CapturedBody?) -> CapturedBody? {
            guard let body, body.data.count > limit else { return body }
            return CapturedBody(data: body.data.prefix(limit), size: body.size, isTruncated: true)
        }
        func cut(_ response: Response?) -> Response? {
            guard var response else { return nil }
            response.body = cut(response.body)
            return response
        }
        switch self {
        case .flowStarted(var log):
            log.request.body = cut(log.request.body)
            log.response = cut(log.response)
            return .flowStarted(log)
        case .flowFinished(var event):
            event.requestBody = cut(event.requestBody)
            event.response = cut(event.response)
            return .flowFinished(event)
        case .held(var hold):
            hold.response = cut(hold.response)
            return .held(hold)
        case .hello, .flowResponse, .status, .released:
            return self
        }
    }
}

/// Keeps frames under the viewer's limit (`Wire.defaultMaximumFrameSize`).
enum FrameFitting {
    /// The frame for `message`; when it would be too large, the frame of the
    /// message with its bodies cut further. `nil` only when even a message
    /// without body bytes cannot be encoded.
    static func frame(for message: Message, encoder: FrameEncoder) -> Data? {
        var candidate = message
        while true {
            do {
                return try encoder.encode(candidate)
            } catch let WireError.frameTooLargeToEncode(length, limit) {
                let largest = candidate.bodies.map(\.data.count).max() ?? 0
                guard largest > 0 else { return nil }
                // Scale by the overshoot, with a margin for base64 and JSON.
                let scaled = Int(Double(largest) * Double(limit) / Double(length) * 0.9)
                candidate = candidate.cuttingBodies(to: max(0, min(largest - 1, scaled)))
            } catch {
                return nil
            }
        }
    }
}

extension FIFO<EventStreamer.Pending> {
    /// How many queued messages are flow events (what drop counts count).
    var flowEventCount: Int {
        var count = 0
        for index in 0..<self.count where self[index].message.isFlowEvent { count += 1 }
        return count
    }
}
