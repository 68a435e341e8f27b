extension Duration {
    /// The whole nanoseconds, for the clocks that count in them (Dispatch, NIO):
    /// a condition's latency and a paced body's waits are scheduled on them.
    package var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
