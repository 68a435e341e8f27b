/// The durations of one group of flows, for exact nearest-rank
/// percentiles, kept up to date as flows arrive without sorting everything
/// again: new durations wait in a small unsorted buffer, and ``settle()``
/// sorts that buffer alone and merges it into the sorted run, one linear
/// pass. A batch of k flows into a group of n costs O(k log k + n), not
/// O(n log n); a flow costs one append.
///
/// ```swift
/// var samples = DurationSamples()
/// for seconds in [0.3, 0.1, 0.2] { samples.add(seconds) }
/// samples.settle()
/// samples.percentile(50)   // 0.2
/// ```
struct DurationSamples: Sendable, Equatable {
    /// The settled durations, ascending.
    private(set) var sorted: [Double] = []
    /// Durations added since the last ``settle()``.
    private var pending: [Double] = []

    init() {}

    /// Adds a duration, in seconds.
    mutating func add(_ seconds: Double) { pending.append(seconds) }

    /// Whether durations wait to be merged.
    var isSettled: Bool { pending.isEmpty }

    /// Merges the durations added since the last call into ``sorted``.
    mutating func settle() {
        guard !pending.isEmpty else { return }
        pending.sort()
        if sorted.isEmpty || pending[0] >= sorted[sorted.count - 1] {
            sorted += pending
        } else {
            var merged: [Double] = []
            merged.reserveCapacity(sorted.count + pending.count)
            var left = 0, right = 0
            while left < sorted.count, right < pending.count {
                if pending[right] < sorted[left] { merged.append(pending[right]); right += 1 } else { merged.append(sorted[left]); left += 1 }
            }
            merged += sorted[left...]
            merged += pending[right...]
            sorted = merged
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// The nearest-rank percentile of the settled durations: the smallest
    /// one with at least `p` percent of them at or below it, the one at rank
    /// ⌈p/100 × n⌉ (no interpolation: every figure shown is a duration a
    /// flow really took). Nil when there are none.
    func percentile(_ p: Int) -> Double? {
        guard !sorted.isEmpty else { return nil }
        // In integers: 0.95 × 20 in doubles is 19.000000000000004, whose ceiling is one rank too far.
        let rank = (p * sorted.count + 99) / 100
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }
}
