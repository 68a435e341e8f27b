import WireProtocol

/// What the flow list is ordered by.
package enum SortKey: String, Sendable, CaseIterable {
    /// Start time, then arrival order: live flows arrive in start order,
    /// a file (`--read`) may hold them in any order.
    case time
    /// Total duration; unfinished flows last.
    case duration
    /// Response body size; flows without a response first.
    case size
    /// Status code; pending first.
    case status
    /// Host name, alphabetically.
    case host

    /// The next key in the `o` cycle.
    var next: SortKey {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

/// The flows the list shows: those of a ``FlowStore`` that pass a filter,
/// in sort order, as sequence numbers.
///
/// Kept up to date incrementally from the store's ``FlowStore/Change``s: an
/// arriving flow costs a binary search (an append in time order), an
/// updated one a removal and a binary insertion. Only a new filter or sort
/// order rebuilds it.
package struct FlowView: Sendable {
    /// A filter over flows (with what the person added to them); nil shows
    /// everything. The store is passed so a filter can look at a flow's parent.
    typealias Predicate = @Sendable (FlowStore.Record, FlowStore) -> Bool

    /// Sequence numbers of the shown flows, in display order.
    private(set) var rows: [Int] = []
    /// The order.
    package private(set) var sortKey: SortKey = .time
    /// Whether the order is reversed.
    private(set) var isReversed = false
    private var predicate: Predicate?

    /// An empty view in time order.
    init() {}

    /// Number of rows.
    var count: Int { rows.count }

    /// Rebuilds the view for a new filter and order.
    mutating func rebuild(from store: FlowStore, predicate: Predicate?, sortKey: SortKey, reversed: Bool) {
        self.predicate = predicate
        self.sortKey = sortKey
        self.isReversed = reversed
        var selected: [Int] = []
        selected.reserveCapacity(store.count)
        if sortKey == .time {
            // Live flows arrive in start order: one pass, sorted only when a file's were not.
            var previous = -Double.infinity
            var inOrder = true
            for record in store.allRecords where !record.isDeleted && predicate?(record, store) ?? true {
                let started = record.log.timing.startedAt.timeIntervalSinceReferenceDate
                inOrder = inOrder && started >= previous
                previous = started
                selected.append(record.sequence)
            }
            if !inOrder { selected.sort { store.sortValue(at: $0, key: .time) < store.sortValue(at: $1, key: .time) } }
        } else {
            // One pass builds the keys too, so each record is visited once.
            var values: [SortValue] = []
            for record in store.allRecords where !record.isDeleted && predicate?(record, store) ?? true {
                values.append(SortValue(record, key: sortKey))
            }
            values.sort()
            selected = values.map(\.sequence)
        }
        if reversed { selected.reverse() }
        rows = selected
    }

    /// Applies the store's changes.
    mutating func apply(_ changes: [FlowStore.Change], from store: FlowStore) {
        for change in changes {
            switch change {
            case .inserted(let sequence):
                insertIfMatching(sequence, store: store)
            case .updated(let sequence):
                if let index = rowIndex(of: sequence, store: store) { rows.remove(at: index) }
                insertIfMatching(sequence, store: store)
            case .evicted(let first):
                rows.removeAll { $0 < first }
            case .cleared:
                rows.removeAll()
            }
        }
    }

    /// The row showing a flow, if shown.
    func rowIndex(of sequence: Int, store: FlowStore) -> Int? {
        if sortKey == .time {
            let index = insertionIndex(for: sequence, store: store)
            if index < rows.count, rows[index] == sequence { return index }
            return nil
        }
        return rows.lastIndex(of: sequence)
    }

    private mutating func insertIfMatching(_ sequence: Int, store: FlowStore) {
        guard let record = store[sequence], !record.isDeleted, predicate?(record, store) ?? true else { return }
        let index = insertionIndex(for: sequence, store: store)
        if index == rows.count { rows.append(sequence) } else { rows.insert(sequence, at: index) }
    }

    /// Binary search for the first row that sorts after `sequence`'s flow.
    private func insertionIndex(for sequence: Int, store: FlowStore) -> Int {
        let value = store.sortValue(at: sequence, key: sortKey)
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            let other = store.sortValue(at: rows[middle], key: sortKey)
            if isReversed ? value < other : other < value {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}

/// A flow's sort key, with its sequence number breaking ties so the order
/// is total and stable.
struct SortValue: Comparable {
    var number: Double
    var text: String
    var sequence: Int

    @inline(__always)
    init(_ record: borrowing FlowStore.Record, key: SortKey) {
        sequence = record.sequence
        text = ""
        switch key {
        case .time: number = record.log.timing.startedAt.timeIntervalSinceReferenceDate
        case .duration: number = record.log.timing.duration ?? .infinity
        case .size: number = record.log.response.map { Double($0.body?.size ?? 0) } ?? -1
        case .status: number = record.log.response.map { Double($0.statusCode) } ?? (record.log.state == .failed ? -1 : 0)
        case .host:
            number = 0
            text = record.host
        }
    }

    static func < (lhs: SortValue, rhs: SortValue) -> Bool {
        if lhs.number != rhs.number { return lhs.number < rhs.number }
        if lhs.text != rhs.text { return lhs.text < rhs.text }
        return lhs.sequence < rhs.sequence
    }
}
