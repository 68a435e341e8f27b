@testable import CaptureAgent

extension PendingQueue {
    /// ``next(into:)`` one message at a time, as the tests read the queue:
    /// the message (`nil` when the queue is empty) and the flow events
    /// dropped on the way.
    mutating func next() -> (taken: Taken?, dropped: Int) {
        var taken: [Taken] = []
        let dropped = next(into: &taken)
        return (taken.first, dropped)
    }
}
