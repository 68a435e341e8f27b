import Foundation
import WireProtocol

/// Sends the agent's events to the inspector: one socket, one background
/// writer thread, one bounded queue.
///
/// App threads only ever call ``submit(_:)``, which takes a lock for a few
/// instructions and never touches the socket. While no inspector is
/// connected, events are counted as dropped without being encoded, so capture
/// costs next to nothing. Every decision (when to connect, retry, greet,
/// wait for the viewer's answer, write, close; what to count as dropped) is
/// ``EventStreamerState``'s, one value under one lock; this class does the
/// I/O its actions ask for and nothing else. When to write within a
/// connection is the state's ``WriterSchedule``'s decision, and what gives
/// way when the queue is full is ``PendingQueue``'s.
///
/// When the inspector dies, the events it never confirmed are counted as
/// dropped too (``DeliveryLedger``).
final class EventStreamer: @unchecked Sendable {
    struct Limits: Sendable {
        var maximumEvents: Int
        var maximumBytes: Int
        /// How long a flow's start waits for its later events to fold in
        /// (``WriterSchedule/foldWindowNanoseconds``).
        var foldWindowNanoseconds = WriterSchedule.foldWindowNanoseconds
    }

    private let destination: Endpoint
    private let hello: Hello
    private let encoder = FrameEncoder()
    private let condition = NSCondition()
    /// The connection's lifecycle, the queue and the counters; guarded by `condition`.
    private var state: EventStreamerState

    // Writer thread only.
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
        state = EventStreamerState(limits: limits, acceptsControl: control != nil)
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
        while !state.firstAttemptIsOver, Date() < deadline {
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
        switch state.admission {
        case .queue:
            // The clock is read only for a message that is queued: the unconnected path stays this cheap.
            state.enqueue(consume message, at: Self.now)
            condition.signal()
        case .count:
            state.notSent(message)
        case .refuse:
            break
        }
    }

    /// Counts events dropped before they were built (no inspector connected).
    func countDropped(_ count: Int) {
        locked { state.dropped(count) }
    }

    var currentStatistics: CaptureAgent.Statistics { locked { state.currentStatistics } }

    /// Whether a connection to the inspector is up.
    var connected: Bool { locked { state.isConnected } }

    /// Whether a connection is up, and whether its viewer reads version 2
    /// (so `bodyPart` events may go to it: a version-1 viewer gets bodies
    /// whole with `flowFinished`), in one lock.
    var viewerState: (isConnected: Bool, readsBodyParts: Bool) {
        locked { (state.isConnected, state.readsBodyParts) }
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Reports a lifecycle event to the state and wakes whoever waits on
    /// one (``waitForFirstAttempt(timeout:)``, ``stop(timeout:)``); returns
    /// what the state says to do next.
    private func report<Result>(_ event: (inout EventStreamerState) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        let next = event(&state)
        condition.broadcast()
        return next
    }

    /// Refuses new events, waits up to `timeout` for the queue to drain,
    /// then closes the connection and ends the writer thread.
    func stop(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        condition.lock()
        state.stopRequested(now: Self.now, timeout: timeout)
        condition.broadcast()
        while state.phase != .stopped, Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        if let socket = state.socketToShutDown {
            // The writer is stuck in `send` to a reader that does not read.
            shutdownSocket(socket)
        }
        condition.unlock()
    }

    // MARK: - Writer thread

    private func run() {
        var next = report { $0.writerStarted() }
        while true {
            switch next {
            case .connect: next = connectAndServe()
            case .retry(let delay): next = waitBeforeRetry(delay)
            case .exit: return
            }
        }
    }

    private func waitBeforeRetry(_ delay: TimeInterval) -> EventStreamerState.Action {
        condition.lock()
        if !state.isStopping { _ = condition.wait(until: Date().addingTimeInterval(delay)) }
        condition.unlock()
        return report { $0.retryWaitEnded() }
    }

    /// Makes one attempt and, once connected, carries out what the state
    /// asks of the connection until it ends; the socket closes on return.
    private func connectAndServe() -> EventStreamerState.Action {
        let socket: EventSocket
        do {
            socket = try EventSocket(connectingTo: destination, timeout: Self.connectTimeout)
        } catch .foreignListener(let uid, let pid) {
            refuse(uid: uid, pid: pid)
            return report { $0.connectFailed() }
        } catch {
            return report { $0.connectFailed() }
        }
        var next = report { $0.connected() }
        while true {
            switch next {
            case .sendHello(let status): next = sendHello(status, on: socket)
            case .awaitAnswer(let timeout): next = awaitViewerAnswer(on: socket, timeout: timeout)
            case .serve: next = serve(socket)
            case .close(let closing):
                let unreadEvents = close(socket, closing)
                // The state forgets the descriptor and the socket closes in one lock: `stop()` never
                // shuts down a descriptor reused meanwhile, and once it returns the socket is closed.
                condition.lock()
                defer { condition.unlock() }
                let after = state.connectionClosed(unreadEvents: unreadEvents)
                _ = consume socket
                condition.broadcast()
                return after
            case .abandon(let then): return then
            }
        }
    }

    private func sendHello(_ status: AgentStatus, on socket: borrowing EventSocket) -> EventStreamerState.ConnectionAction {
        do {
            viewer = ViewerInput(seesUnread: socket.seesUnread, control: control)
            outgoing.removeAll(keepingCapacity: true)
            try encoder.encode(.hello(hello), appendingTo: &outgoing)
            try encoder.encode(.status(status), appendingTo: &outgoing)
            try viewer.write(outgoing, messageEvents: [], on: socket)
        } catch {
            return report { $0.helloFailed() }
        }
        return report { $0.helloSent(socket: socket.descriptor) }
    }

    /// A viewer sends the protocol version it reads, then its rules, before
    /// its first receipt, which it sends as soon as it accepts the hello.
    /// Reading up to that receipt before `start()` returns puts both in
    /// force for the app's very first request: its rules, and its body
    /// parts (a stream that was the app's first request otherwise went out
    /// whole until the first idle check read the switch, ``WriterSchedule``).
    /// Bounded: `start()` waits at most `initialConnectionWait`, and a
    /// viewer that sends nothing costs this thread `timeout`.
    private func awaitViewerAnswer(on socket: borrowing EventSocket, timeout: TimeInterval) -> EventStreamerState.ConnectionAction {
        let deadline = Date().addingTimeInterval(timeout)
        while viewer.ledger.acknowledged == nil {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, socket.waitForIncoming(timeout: remaining), viewer.read(from: socket) else { break }
        }
        return report { $0.answered(frameVersion: viewer.frameVersion) }
    }

    /// Says on stderr, once per listener process, that a listener of another
    /// user was refused: the app's owner should know why nothing arrives.
    private func refuse(uid: UInt32, pid: Int32) {
        guard locked({ state.listenerRefused(pid: pid) }) else { return }
        let message = "netinspect CaptureAgent: not sending to \(destination): the process listening there (pid \(pid)) "
            + "runs as uid \(uid), not as this app's uid \(geteuid()) or root. Nothing was sent; the agent keeps trying.\n"
        FileHandle.standardError.write(Data(message.utf8))
    }

    /// Writes queued events until the connection fails or the agent stops:
    /// does what the state's schedule says, holding the lock only to look
    /// at and take from the queue. Returns how the connection ends.
    private func serve(_ socket: borrowing EventSocket) -> EventStreamerState.ConnectionAction {
        condition.lock()
        while true {
            let now = Self.now
            switch state.nextStep(now: now, frameVersion: viewer.frameVersion) {
            case .waitForEvents(let seconds):
                state.waited(timedOut: !condition.wait(until: Date().addingTimeInterval(seconds)))
            case .checkViewer:
                condition.unlock()
                // Sampled before the check: once the peer is gone the charge reads 0.
                viewer.observeUnread(on: socket)
                guard viewer.read(from: socket) else { return report { $0.viewerClosed() } }
                condition.lock()
            case .pause(let microseconds):
                condition.unlock()
                usleep(microseconds)
                condition.lock()
            case .close:
                condition.unlock()
                // We close; the inspector can still read what we wrote.
                return .close(.goodbye)
            case .write:
                batch.removeAll(keepingCapacity: true)
                let status = state.takeBatch(into: &batch, now: now)
                guard !batch.isEmpty || status != nil else { continue }
                condition.unlock()
                switch write(status: status, on: socket) {
                case .written(let frames, let unencodable):
                    condition.lock()
                    state.wrote(frames: frames, unencodable: unencodable)
                case .failed(let next):
                    return next
                }
            }
        }
    }

    private enum WriteResult {
        case written(frames: Int, unencodable: Int)
        /// The write failed and the connection is to end so.
        case failed(EventStreamerState.ConnectionAction)
    }

    /// Encodes the batch, after `status` if one is due, and sends it in one write.
    private func write(status: AgentStatus?, on socket: borrowing EventSocket) -> WriteResult {
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
            return .failed(writeFailed(error, lostEvents: encoded.flowEvents + encoded.unencodable, socket: socket))
        }
        if outgoing.capacity > Self.keptBufferCapacity { outgoing = [] }
        return .written(frames: encoded.frames + (status == nil ? 0 : 1), unencodable: encoded.unencodable)
    }

    /// Tells the state whether the inspector had read everything: a Unix
    /// socket without ECONNRESET tells that a receipt-less inspector had
    /// read every frame. Over TCP no errno tells that (a peer that read
    /// everything, then died, leaves EPIPE), so it never has. Receipts it
    /// sent before it went may still wait in our receive buffer, unread
    /// because this thread was blocked in `send` (a slow inspector fills
    /// the socket before 32 events are written): read them first, or a
    /// receipt-less look would take EPIPE as "read everything" and lose
    /// what it had read but not yet shown, uncounted.
    private func writeFailed(_ error: EventSocket.Failure, lostEvents: Int, socket: borrowing EventSocket) -> EventStreamerState.ConnectionAction {
        _ = viewer.read(from: socket)
        let leftUnread = error == .system(call: "send", errno: ECONNRESET) || socket.peerLeftUnreadData()
        let readEverything = !leftUnread && viewer.ledger.acknowledged == nil && socket.seesUnread
        return report { $0.writeFailed(lostEvents: lostEvents, viewerReadEverything: readEverything) }
    }

    /// Ends the connection as the state said, but for closing the socket:
    /// a viewer that went away (`viewerGone`) leaves the events it never
    /// confirmed to count, returned; one we leave gets the time to read what we wrote.
    private func close(_ socket: borrowing EventSocket, _ closing: EventStreamerState.Closing) -> Int {
        var unreadEvents = 0
        switch closing {
        case .viewerGone:
            // Receipts it sent before dying are still in our receive buffer.
            _ = viewer.read(from: socket)
            unreadEvents = viewer.ledger.unconfirmedEvents
        case .goodbye:
            socket.finishGracefully(timeout: Self.goodbyeTimeout)
        }
        // The viewer's rules and breakpoints go with it; requests from now on are the app's own.
        viewerGone?()
        return unreadEvents
    }
}
