#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import WireProtocol

/// Identifies one agent connection for as long as the listener runs.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// Numbers count up from 1 in the order connections were accepted.
    public var rawValue: UInt64

    /// Wraps a number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String { "#\(rawValue)" }
}

/// What the listener tells the UI.
public enum InboxEvent: Sendable, Equatable {
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

/// A lock-protected queue plus a wake-up: network threads post, the UI
/// thread drains.
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
public final class Inbox: Sendable {
    // NIO's lock is a pthread mutex, which ThreadSanitizer understands;
    // Synchronization.Mutex's contended path is invisible to it on Linux and
    // makes `swift test --sanitize=thread` report races that are not there.
    private let events = NIOLockedValueBox<[InboxEvent]>([])
    private let readEnd: Int32
    private let writeEnd: Int32

    /// Creates an empty inbox and its wake-up pipe.
    public init() {
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

    /// Queues an event; wakes the reader if the queue was empty.
    public func post(_ event: InboxEvent) {
        events.withLockedValue { queue in
            if queue.isEmpty { writeWakeByte() }
            queue.append(event)
        }
    }

    /// Takes every queued event, oldest first, and clears the wake-up.
    public func drain() -> [InboxEvent] {
        events.withLockedValue { queue in
            guard !queue.isEmpty else { return [] }
            readWakeByte()
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
    }

    /// A file descriptor that is readable while events are waiting (the read
    /// end of a pipe; ``drain()`` empties it). For `poll()` on the UI thread.
    public var wakeFileDescriptor: Int32 { readEnd }

    /// Waits up to `timeout` for events (for tests and headless mode) and
    /// returns ``drain()``: empty when none came in time.
    public func wait(timeout: Duration) -> [InboxEvent] {
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
