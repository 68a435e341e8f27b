import Foundation

/// A value behind a lock. The agent's shared state is small and touched
/// briefly, so a plain `NSLock` is enough; nothing here is held across I/O.
///
/// The package's one lock for the agent and its adapters, rather than
/// `Synchronization.Mutex`: on Linux a contended `Mutex` is taken by the
/// kernel (`FUTEX_LOCK_PI`), which ThreadSanitizer cannot see, so every
/// contended `Mutex` is reported as a race that is not there. `NSLock` is a
/// pthread mutex, which it understands. `scripts/sanitizers.sh` refuses
/// `Mutex` in the sources for that reason.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    package var current: Value { withLock { $0 } }
}
