#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass,
/// and says whether it held; the timeout bounds a broken build, it is not
/// a speed target.
///
/// ```swift
/// XCTAssertTrue(eventually { agent.isConnected }, "the agent connected")
/// ```
@discardableResult
public func eventually(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
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
