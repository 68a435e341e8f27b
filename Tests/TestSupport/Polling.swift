#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Calls `attempt` every `interval` seconds until it gives a value or
/// `timeout` seconds pass (then once more), and returns that value: the
/// one way a synchronous test waits for something to happen. The timeout
/// bounds a broken build, it is not a speed target.
///
/// ```swift
/// let screen = poll(timeout: 15, every: 0.05) { let s = tmux.capture(); return s.contains("GET") ? s : nil }
/// ```
public func poll<Value>(timeout: TimeInterval, every interval: TimeInterval = 0.01, _ attempt: () throws -> Value?) rethrows -> Value? {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if let value = try attempt() { return value }
        usleep(useconds_t(interval * 1_000_000))
    }
    return try attempt()
}

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass,
/// and says whether it held.
///
/// ```swift
/// XCTAssertTrue(eventually { agent.isConnected }, "the agent connected")
/// ```
@discardableResult
public func eventually(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    poll(timeout: timeout) { condition() ? true : nil } ?? false
}

/// Polls `progress` every 10 ms until `done` holds for it, for as long as
/// it keeps changing: gives up only once it has stood still for `stall`
/// seconds. For a wait whose length is another process's speed (a
/// sanitizer build of netinspect reading megabytes, a loaded machine),
/// where a fixed timeout fails a test that was only slow, and a stall
/// still fails one that lost something.
///
/// ```swift
/// XCTAssertTrue(eventuallyWhileProgressing({ inspector.lineCount }) { $0 == 40 })
/// ```
@discardableResult
public func eventuallyWhileProgressing<Progress: Equatable>(stall: TimeInterval = 30, _ progress: () -> Progress,
                                                            until done: (Progress) -> Bool) -> Bool {
    var last = progress()
    var lastChange = Date()
    while !done(last) {
        usleep(10_000)
        let now = progress()
        if now != last {
            last = now
            lastChange = Date()
        } else if Date().timeIntervalSince(lastChange) > stall {
            return false
        }
    }
    return true
}

/// ``eventually(timeout:_:)`` for async tests: polls every 20 ms (or
/// `every`, for a test server's gate that paces a stream) without blocking
/// a thread that the service under test needs.
///
/// ```swift
/// let recorded = await waitUntil { inspector.flows.count == 2 }
/// ```
public func waitUntil(timeout: Double = 10, every interval: Duration = .milliseconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return condition()
}

/// A scenario's own pace: a server that is slow on purpose, a client that
/// reads or writes a drip at a time, a post meant to arrive while a call
/// blocks. Never a wait for a condition (tests wait with ``poll(timeout:every:_:)``,
/// ``eventually(timeout:_:)`` and ``waitUntil(timeout:every:_:)``), so
/// nothing asserted depends on how long it lasts. Throws when the task is
/// cancelled, as the real server's or client's own wait would.
///
/// ```swift
/// for chunk in chunks { try await writer.write(chunk); try await pace(.milliseconds(20)) }
/// ```
public func pace(_ duration: Duration) async throws {
    try await Task.sleep(for: duration)
}

/// ``pace(_:)`` for a thread of the scenario's own (a sender, a sampler).
public func paceThread(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
}
