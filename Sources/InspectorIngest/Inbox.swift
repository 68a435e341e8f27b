#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import WireProtocol

/// What the listener tells the UI.
package enum InboxEvent: Sendable, Equatable {
    /// The listener is bound: one per endpoint, with the real port for `tcp:…:0`.
    case listening(Endpoint)
    /// An agent sent a valid hello (carrying the token, when one is required).
    case connected(ConnectionID, Hello, peer: String)
    /// A message after the hello, in the order the agent sent it.
    case message(ConnectionID, Message)
    /// A connected agent went away: `nil` for a clean end of stream, else why
    /// the connection was closed (a ``WireProtocol/WireError`` description…).
    case disconnected(ConnectionID, reason: String?)
    /// A connection closed before a valid hello: garbage, an unsupported
    /// version, a wrong token, no hello in time.
    case rejected(peer: String, reason: String)
}

/// A lock-protected, bounded queue plus a wake-up: network threads post,
/// the UI thread drains.
///
/// The wake-up is the read end of a pipe that holds one byte exactly while
/// events are waiting, so the UI can `poll()` it next to standard input:
///
/// ```swift
/// var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
///            pollfd(fd: inbox.wakeFileDescriptor, events: Int16(POLLIN), revents: 0)]
/// poll(&fds, 2, 100)
/// for event in inbox.drain() { state.apply(event) }
/// ```
///
/// The bound is the back-pressure between agents and the UI. The listener
/// offers each event with ``offer(_:bytes:)``; once the inbox holds
/// ``Limits-swift.struct/maximumEvents`` events or
/// ``Limits-swift.struct/maximumBytes`` bytes of frames, offers are refused
/// and the listener stops reading from the connection that was refused. The
/// next ``drain()``, which always empties the inbox, tells the listener to
/// read again. Nothing is dropped here: while the listener does not read,
/// the kernel's socket buffers fill, an agent's writes stop succeeding, and
/// the agent's own bounded queue drops its oldest events and reports it.
/// One listener per inbox: ``InspectorListener`` installs the callback that
/// ``drain()`` uses to wake it.
package final class Inbox: Sendable {
    /// How much an inbox holds before it refuses offers.
    package struct Limits: Sendable, Equatable {
        /// Events waiting; an offer is refused once this many wait.
        package var maximumEvents: Int
        /// Bytes of frames waiting (as counted by the offerer); an offer is
        /// refused once this many wait, so one frame may take it past.
        package var maximumBytes: Int

        /// Creates limits; each must be at least 1.
        package init(maximumEvents: Int, maximumBytes: Int) {
            precondition(maximumEvents >= 1 && maximumBytes >= 1, "inbox limits must be at least 1")
            self.maximumEvents = maximumEvents
            self.maximumBytes = maximumBytes
        }

        /// 50,000 events, about a second of the UI's work at the ingest
        /// target of 50,000 events a second (so a UI that keeps up never
        /// meets it), and 64 MiB of frames, the byte bound of an agent's own
        /// queue (four frames of the largest size the listener accepts).
        package static let standard = Limits(maximumEvents: 50_000, maximumBytes: 64 << 20)
    }

    private struct Queue {
        var events: [InboxEvent] = []
        var bytes = 0
        /// Offers refused since the last drain: each offerer waits for
        /// `onSpace` (a connection refused once offers nothing more until then).
        var refusals = 0
        var onSpace: (@Sendable () -> Void)?
        /// Where ``acknowledge(_:)`` sends counts (the listener, which
        /// writes them back to the agents as receipts).
        var onTaken: (@Sendable ([ConnectionID: Int]) -> Void)?
        /// Where ``send(_:to:)`` goes (the listener, which writes it to that agent).
        var onControl: (@Sendable (ViewerMessage, ConnectionID) -> Void)?
        /// Where ``replaceRules(_:)`` goes (the listener).
        var onRules: (@Sendable ([TrafficRule]) -> Void)?
        var onServerReplay: (@Sendable ([[UInt8]]) -> Void)?
    }

    /// The bound that ``offer(_:bytes:)`` applies.
    package let limits: Limits
    // NIO's lock is a pthread mutex, which ThreadSanitizer understands;
    // Synchronization.Mutex's contended path is invisible to it on Linux and
    // makes `swift test --sanitize=thread` report races that are not there.
    private let queue = NIOLockedValueBox(Queue())
    private let readEnd: Int32
    private let writeEnd: Int32

    /// Creates an empty inbox and its wake-up pipe.
    package init(limits: Limits = .standard) {
        self.limits = limits
        var ends: [Int32] = [-1, -1]
        // Without a pipe there is no way to wake the UI; nothing sensible remains.
        precondition(pipe(&ends) == 0, "netinspect: cannot create the inbox wake-up pipe: \(String(cString: strerror(errno)))")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Queues an event whatever the bound (the listener's `listening`
    /// events, tests); wakes the reader if the queue was empty.
    package func post(_ event: InboxEvent) {
        queue.withLockedValue { queue in append(event, bytes: 0, to: &queue) }
    }

    /// Queues an event unless the inbox is full, that is unless it already
    /// holds ``Limits-swift.struct/maximumEvents`` events or
    /// ``Limits-swift.struct/maximumBytes`` bytes.
    /// - Parameter bytes: what the event counts against the byte bound (the
    ///   listener passes the size of the frame it came in).
    /// - Returns: false when refused; the next ``drain()`` then calls the
    ///   listener back, so it can offer again.
    package func offer(_ event: InboxEvent, bytes: Int) -> Bool {
        queue.withLockedValue { queue in
            guard queue.events.count < limits.maximumEvents, queue.bytes < limits.maximumBytes else {
                queue.refusals += 1
                return false
            }
            append(event, bytes: bytes, to: &queue)
            return true
        }
    }

    /// Takes every queued event, oldest first, and clears the wake-up. If an
    /// offer was refused since the last drain, calls the listener back.
    package func drain() -> [InboxEvent] {
        queue.withLockedValue { queue in
            guard !queue.events.isEmpty else { return [] }
            readWakeByte()
            defer {
                queue.events.removeAll(keepingCapacity: true)
                queue.bytes = 0
                if queue.refusals > 0 {
                    queue.refusals = 0
                    // Under the lock, so that once setSpaceHandler(nil) has
                    // returned no call is still on its way.
                    queue.onSpace?()
                }
            }
            return queue.events
        }
    }

    /// Events waiting now.
    package var count: Int { queue.withLockedValue { $0.events.count } }

    /// Bytes of frames waiting now, as counted by ``offer(_:bytes:)``.
    package var byteCount: Int { queue.withLockedValue { $0.bytes } }

    /// Whether an offer was refused since the last drain: a connection's
    /// reading is parked until the next ``drain()``.
    package var hasRefused: Bool { refusals > 0 }

    /// Offers refused since the last drain: as many connections are parked
    /// until the next ``drain()``, since a refused connection reads no more.
    package var refusals: Int { queue.withLockedValue { $0.refusals } }

    /// What ``drain()`` calls (with the inbox's lock held) after emptying an
    /// inbox that refused an offer: it must only hand work to another thread.
    /// `nil` unhooks it; once this returns, the old handler is not running
    /// and will not be called.
    func setSpaceHandler(_ handler: (@Sendable () -> Void)?) {
        queue.withLockedValue { $0.onSpace = handler }
    }

    /// Tells the agents how many of their events the UI has now taken:
    /// call after showing drained events (applied to the store, or printed),
    /// with the counts of ``takenEvents(in:)`` or their own. The listener
    /// adds them up per connection and sends each agent a receipt, from
    /// which an agent whose inspector dies counts what never arrived.
    package func acknowledge(_ counts: [ConnectionID: Int]) {
        guard !counts.isEmpty, let handler = queue.withLockedValue({ $0.onTaken }) else { return }
        handler(counts)
    }

    /// The events per connection that count for receipts among `events`:
    /// flow messages (`flowStarted`, `flowResponse`, `flowFinished`), the
    /// ones an agent counts when it drops them.
    package static func takenEvents(in events: [InboxEvent]) -> [ConnectionID: Int] {
        var counts: [ConnectionID: Int] = [:]
        for case let .message(connection, message) in events where message.isFlowEvent {
            counts[connection, default: 0] += 1
        }
        return counts
    }

    /// Sends a control message (a replay) to one agent's connection.
    /// - Returns: false when no listener is attached (a file opened with `--read`).
    @discardableResult
    package func send(_ message: ViewerMessage, to connection: ConnectionID) -> Bool {
        guard let handler = queue.withLockedValue({ $0.onControl }) else { return false }
        handler(message, connection)
        return true
    }

    /// Puts new traffic rules in force: every connected agent that accepts
    /// control gets them now (each `rules` message replaces the last; an
    /// empty list removes them), and every agent that connects later gets
    /// them after its hello instead of the listener's starting rules.
    ///
    /// ```swift
    /// inbox.replaceRules([try TrafficRule(.mapRemote, spec: "|api.example.com|127.0.0.1:8080")])
    /// ```
    /// - Returns: false when no listener is attached (a file opened with `--read`).
    @discardableResult
    package func replaceRules(_ rules: [TrafficRule]) -> Bool {
        guard let handler = queue.withLockedValue({ $0.onRules }) else { return false }
        handler(rules)
        return true
    }

    /// Puts a server replay in force (InspectorCore's `ServerReplaySet.frames()`), or
    /// stops it (`[]`): for every agent that accepts control, now and as
    /// it connects, like ``replaceRules(_:)``.
    ///
    /// ```swift
    /// inbox.replaceServerReplay(try ServerReplaySet(paths: ["run.har"], options: .init()).frames())
    /// ```
    /// - Returns: false when no listener is attached (a file opened with `--read`).
    @discardableResult
    package func replaceServerReplay(_ frames: [[UInt8]]) -> Bool {
        guard let handler = queue.withLockedValue({ $0.onServerReplay }) else { return false }
        handler(frames)
        return true
    }

    /// What ``replaceServerReplay(_:)`` calls; it must only hand work to another thread.
    func setServerReplayHandler(_ handler: (@Sendable ([[UInt8]]) -> Void)?) {
        queue.withLockedValue { $0.onServerReplay = handler }
    }

    /// What ``replaceRules(_:)`` calls; it must only hand work to another thread.
    func setRulesHandler(_ handler: (@Sendable ([TrafficRule]) -> Void)?) {
        queue.withLockedValue { $0.onRules = handler }
    }

    /// What ``send(_:to:)`` calls; it must only hand work to another thread.
    func setControlHandler(_ handler: (@Sendable (ViewerMessage, ConnectionID) -> Void)?) {
        queue.withLockedValue { $0.onControl = handler }
    }

    /// What ``acknowledge(_:)`` calls; it must only hand work to another
    /// thread. `nil` unhooks it.
    func setTakenHandler(_ handler: (@Sendable ([ConnectionID: Int]) -> Void)?) {
        queue.withLockedValue { $0.onTaken = handler }
    }

    private func append(_ event: InboxEvent, bytes: Int, to queue: inout Queue) {
        if queue.events.isEmpty { writeWakeByte() }
        queue.events.append(event)
        queue.bytes += bytes
    }

    /// A file descriptor that is readable while events are waiting (the read
    /// end of a pipe; ``drain()`` empties it). For `poll()` on the UI thread.
    package var wakeFileDescriptor: Int32 { readEnd }

    /// Waits up to `timeout` for events (for tests and headless mode) and
    /// returns ``drain()``: empty when none came in time.
    package func wait(timeout: Duration) -> [InboxEvent] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let drained = drain()
            let remaining = clock.now.duration(to: deadline)
            guard drained.isEmpty, remaining > .zero else { return drained }
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(clamping: remaining.roundedUpMilliseconds))
        }
    }

    private func writeWakeByte() {
        var byte: UInt8 = 1
        // The pipe holds at most one byte, so this cannot block or fill up.
        _ = write(writeEnd, &byte, 1)
    }

    private func readWakeByte() {
        var byte: UInt8 = 0
        _ = read(readEnd, &byte, 1)
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a wait never returns just early.
    var roundedUpMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}

