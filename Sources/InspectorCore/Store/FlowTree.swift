import WireProtocol

/// The flow list as a tree, the way a trace viewer shows a request and the
/// calls made for it: each flow whose parent is shown right under it,
/// indented, in the list's order; every other flow at the top. A call's
/// parent is the inbound flow it names (``NetworkLog/parentID``), an
/// inbound flow's the captured call that made it
/// (``FlowStore/parentSequence(of:)``), so one service's request nests
/// under the call of the service that sent it.
///
/// Made from the list's rows and the store alone, so it does not matter
/// whether a parent arrived before or after its children: a child whose
/// parent is not shown (filtered out, evicted, not yet arrived) is
/// top-level until the parent is there.
///
/// ```swift
/// let tree = FlowTree(rows: view.rows, store: store, collapsed: [])
/// tree.rows          // parent, its children, next parent…
/// tree.depth[child]  // 1
/// ```
struct FlowTree: Sendable, Equatable {
    /// Sequence numbers in display order, collapsed children left out.
    private(set) var rows: [Int] = []
    /// How deep each shown flow is nested; absent means top-level (0).
    private(set) var depth: [Int: Int] = [:]
    /// How many children each parent has among the list's rows, collapsed or not.
    private(set) var childCount: [Int: Int] = [:]

    /// Nests `rows` (in their order) by parent; the children of parents in
    /// `collapsed` are left out, or of every parent when `collapsesAll`.
    init(rows listRows: [Int], store: FlowStore, collapsed: Set<Int>, collapsesAll: Bool = false) {
        // Flat arrays over the store's sequence range rather than sets and
        // dictionaries: the tree is rebuilt for every batch of events.
        let base = store.firstSequence
        let span = store.endSequence - base
        var shown = [Bool](repeating: false, count: span)
        for sequence in listRows where sequence >= base && sequence - base < span { shown[sequence - base] = true }
        var parentOf = [Int](repeating: -1, count: span)
        var children: [Int: [Int]] = [:]
        for sequence in listRows where sequence >= base && sequence - base < span {
            guard let parent = store.parentSequence(of: sequence),
                  parent >= base, parent - base < span, shown[parent - base] else { continue }
            children[parent, default: []].append(sequence)
            parentOf[sequence - base] = parent
        }
        childCount = children.mapValues(\.count)
        var placed = [Bool](repeating: false, count: span)
        var rows: [Int] = []
        rows.reserveCapacity(listRows.count)
        var depth: [Int: Int] = [:]
        func place(_ sequence: Int, at level: Int) {
            guard !placed[sequence - base] else { return }
            placed[sequence - base] = true
            rows.append(sequence)
            if level > 0 { depth[sequence] = level }
            guard !collapsesAll, !collapsed.contains(sequence) else { return }
            for child in children[sequence] ?? [] { place(child, at: level + 1) }
        }
        for sequence in listRows where sequence >= base && sequence - base < span && parentOf[sequence - base] < 0 {
            place(sequence, at: 0)
        }
        // Flows naming each other as parents (a corrupt file) have no root:
        // show them at the top rather than lose them. A child under a
        // collapsed parent has a placed ancestor and stays hidden.
        for sequence in listRows where sequence >= base && sequence - base < span
            && parentOf[sequence - base] >= 0 && !placed[sequence - base] {
            var seen: Set<Int> = [sequence]
            var current = sequence
            var rooted = false
            while parentOf[current - base] >= 0, seen.insert(parentOf[current - base]).inserted {
                current = parentOf[current - base]
                if placed[current - base] { rooted = true; break }
            }
            if !rooted { place(sequence, at: 0) }
        }
        self.rows = rows
        self.depth = depth
    }
}
