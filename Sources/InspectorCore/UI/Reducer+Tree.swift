import WireProtocol

extension Reducer {
    // MARK: - Nested list

    /// `T` nests the list by parent or flattens it; `-` collapses or
    /// expands the selected parent (on a child: its parent, which it then
    /// selects, as a trace viewer folds the span you are in); `_` all of them.
    static func treeCommand(_ command: Command, in state: inout AppState) {
        switch command {
        case .toggleTree:
            if state.tree == nil {
                state.tree = FlowTree(rows: [], store: state.session.store, collapsed: [])
                state.notice = Notice(text: "Nested: each inbound flow's calls under it (\(state.keyName(.toggleCollapse)) collapses one, \(state.keyName(.toggleCollapseAll)) all)", isError: false)
            } else {
                state.tree = nil
                state.notice = Notice(text: "Flat list", isError: false)
            }
        case .toggleCollapse:
            guard let tree = state.tree, let selection = state.selection else {
                state.notice = Notice(text: "Collapsing needs the nested list (\(state.keyName(.toggleTree)))", isError: true)
                return
            }
            let parent = tree.childCount[selection] != nil ? selection : parentRow(of: selection, in: state)
            guard let parent else {
                state.notice = Notice(text: "This flow made no calls and has no parent in the list", isError: true)
                return
            }
            if state.collapsesAll {
                // Opening one parent out of "all collapsed": every other stays shut.
                state.collapsesAll = false
                state.collapsedParents = Set(tree.childCount.keys).subtracting([parent])
            } else if state.collapsedParents.remove(parent) == nil {
                state.collapsedParents.insert(parent)
            }
            state.selection = parent
            state.follows = false
        case .toggleCollapseAll:
            guard state.tree != nil else {
                state.notice = Notice(text: "Collapsing needs the nested list (\(state.keyName(.toggleTree)))", isError: true)
                return
            }
            state.collapsesAll.toggle()
            state.collapsedParents = []
            if let selection = state.selection, state.collapsesAll { state.selection = rootRow(of: selection, in: state) }
            state.follows = false
        default: return
        }
        state.syncCursor()
    }

    /// The selected flow's parent when that is a row of the nested list.
    private static func parentRow(of sequence: Int, in state: AppState) -> Int? {
        let store = state.session.store
        guard let id = store[sequence]?.log.parentID, let parent = store.sequence(of: id),
              state.tree?.childCount[parent] != nil else { return nil }
        return parent
    }

    /// The top-level row a flow is nested under (itself when top-level).
    private static func rootRow(of sequence: Int, in state: AppState) -> Int {
        var current = sequence
        var seen: Set<Int> = [sequence]
        while let parent = parentRow(of: current, in: state), seen.insert(parent).inserted { current = parent }
        return current
    }
}
