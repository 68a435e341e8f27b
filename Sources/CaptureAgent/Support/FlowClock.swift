import Foundation

/// The two clocks a flow's timing is taken from: wall-clock time for
/// `Timing.startedAt` (display only) and a monotonic clock for every offset,
/// so a wall-clock step can never make a duration negative. Injected so tests
/// can drive time.
package struct FlowClock: Sendable {
    /// Wall-clock now.
    var wallNow: @Sendable () -> Date
    /// Monotonic now, in nanoseconds from an arbitrary origin.
    var monotonicNanoseconds: @Sendable () -> UInt64

    /// The system's clocks; wall-clock time to the microsecond, which is
    /// finer than anything shows it, and lets the wire write and read it
    /// as an exact decimal (``JSONWriter``'s fixed-point numbers) rather
    /// than the 17 digits an arbitrary `Date` needs.
    static let system = FlowClock(
        wallNow: { Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000) },
        monotonicNanoseconds: { DispatchTime.now().uptimeNanoseconds }
    )

    /// A point in time on both clocks, taken together at the start of a flow.
    package struct Start: Sendable {
        let date: Date
        let nanoseconds: UInt64
    }

    package func start() -> Start {
        Start(date: wallNow(), nanoseconds: monotonicNanoseconds())
    }

    /// Seconds on the monotonic clock from `earlier` to `later` (0 if `later` is not later).
    package static func seconds(from earlier: Start, to later: Start) -> Double {
        later.nanoseconds >= earlier.nanoseconds ? Double(later.nanoseconds - earlier.nanoseconds) / 1_000_000_000 : 0
    }

    /// Seconds from one offset to a later one, both whole nanoseconds on
    /// this clock, rounded to the nanosecond the difference is: the bare
    /// subtraction is off by a bit, which the wire then writes in 17
    /// digits through `description` rather than as the exact decimal
    /// (`JSONWriter`'s fixed point; docs/BENCHMARKS.md, "Costs behind the code").
    static func interval(from earlier: Double, to later: Double) -> Double {
        ((later - earlier) * 1_000_000_000).rounded() / 1_000_000_000
    }

    /// Seconds elapsed on the monotonic clock since `start`.
    func offset(since start: Start) -> Double {
        let now = monotonicNanoseconds()
        return now >= start.nanoseconds ? Double(now - start.nanoseconds) / 1_000_000_000 : 0
    }
}
