/// A `Duration` in the units the listener needs it in: SwiftNIO schedules
/// in whole nanoseconds, and a closed connection's reason names its timeout
/// in seconds.
extension Duration {
    /// The whole nanoseconds (`TimeAmount.nanoseconds(_:)` takes them).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// "10s", "0.5s": as a reason for closing a connection puts it.
    var secondsText: String {
        let (seconds, attoseconds) = components
        guard attoseconds != 0 else { return "\(seconds)s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18)s"
    }
}
