import Foundation
import WireProtocol

extension AppState {
    /// The key of a command in the list, for notices ("press + …"); its
    /// `:` name when the person's keymap left it without one.
    func keyName(_ command: Command) -> String {
        keymap.key(for: command, in: .list) ?? ":" + (CommandTable.spec(for: command)?.alias ?? command.rawValue)
    }

    /// The time of the last ``Action/tick(_:)``, for what the reducer
    /// stamps: it reads no clock of its own (the program ticks before it
    /// reports anything).
    var clock: Date { now ?? Date(timeIntervalSince1970: 0) }

    /// The flow a command acts on: the one the detail view shows, else the
    /// list's selection.
    var focusedFlow: Int? {
        if case .detail(let detail) = mode { detail.sequence } else { selection }
    }

    /// Rebuilds the list index after a filter or order change.
    mutating func rebuildView(sortKey: SortKey? = nil, reversed: Bool? = nil) {
        let filters = [searchFilter, expressionFilter].compactMap { $0 }
        let predicate: FlowView.Predicate? = filters.isEmpty ? nil : { @Sendable record, store in
            filters.allSatisfy {
                $0.matches(record.log, marked: record.annotation.isMarked, comment: record.annotation.comment,
                           origin: store.origin(of: record), parent: { store.parent(of: $0) })
            }
        }
        view.rebuild(
            from: session.store,
            predicate: predicate,
            sortKey: sortKey ?? view.sortKey,
            reversed: reversed ?? view.isReversed
        )
        if pausedRows != nil {
            refreshTree()
            pausedRows = tree?.rows ?? view.rows
        }
        syncCursor()
    }

    /// Whether the filter in force must be run again over every flow when
    /// flows arrive: `~parent` answers for a child can change when its
    /// parent comes in after it.
    var filterLooksAtParents: Bool {
        [searchFilter, expressionFilter].contains { $0?.looksAtParent == true }
    }

    /// Re-nests the list after its rows or the collapsed parents changed.
    mutating func refreshTree() {
        guard tree != nil else { return }
        tree = FlowTree(rows: view.rows, store: session.store, collapsed: collapsedParents, collapsesAll: collapsesAll)
    }

    /// Moves the list cursor; moving up stops following.
    mutating func moveCursor(to row: Int) {
        let count = rows.count
        guard count > 0 else { return }
        let target = min(max(0, row), count - 1)
        if target < cursor { follows = false }
        cursor = target
        selection = rows[target]
        scrollListIntoView()
    }

    /// Re-finds the selected flow after the rows changed; under follow,
    /// selects the newest flow.
    mutating func syncCursor() {
        refreshTree()
        let rows = self.rows
        guard !rows.isEmpty else {
            cursor = 0
            selection = nil
            listTop = 0
            return
        }
        if follows {
            if view.sortKey == .time, pausedRows == nil, tree == nil {
                cursor = view.isReversed ? 0 : rows.count - 1
            } else {
                cursor = rows.indices.max { rows[$0] < rows[$1] } ?? 0
            }
        } else if let selection, let row = row(of: selection) {
            cursor = row
        } else {
            cursor = min(max(0, cursor), rows.count - 1)
        }
        selection = rows[cursor]
        scrollListIntoView()
    }

    private func row(of sequence: Int) -> Int? {
        if let pausedRows { return pausedRows.lastIndex(of: sequence) }
        if let tree { return tree.rows.firstIndex(of: sequence) }
        return view.rowIndex(of: sequence, store: session.store)
    }

    private mutating func scrollListIntoView() {
        let height = listHeight
        if cursor < listTop { listTop = cursor }
        if cursor >= listTop + height { listTop = cursor - height + 1 }
        listTop = max(0, min(listTop, max(0, rows.count - height)))
    }

    /// Rows of the detail view, help overlay or event log below their title lines.
    var pageHeight: Int { max(1, size.height - 4) }

    /// Scrolls whatever scrolls in the current mode.
    mutating func scroll(by delta: Int) {
        if var overlay {
            overlay.scroll = overlay.scroll.addingReportingOverflow(delta).partialValue
            self.overlay = overlay
        } else if showsHelp {
            helpScroll = helpScroll.addingReportingOverflow(delta).partialValue
        } else {
            switch mode {
            case .list, .rules, .insights: break
            case .detail(var detail):
                detail.scroll = detail.scroll.addingReportingOverflow(delta).partialValue
                if delta < 0 { detail.followsEnd = false }
                mode = .detail(detail)
            case .events(let scroll):
                mode = .events(scroll: scroll.addingReportingOverflow(delta).partialValue)
            case .output(let scroll):
                mode = .output(scroll: scroll.addingReportingOverflow(delta).partialValue)
            case .diff(var diff):
                diff.scroll = diff.scroll.addingReportingOverflow(delta).partialValue
                mode = .diff(diff)
            }
        }
        clampScrolls()
        if delta > 0, overlay == nil, !showsHelp { resumeFollowingAtTheEnd() }
    }

    /// Keeps scroll positions within their content.
    mutating func clampScrolls() {
        func clamp(_ value: Int, lines: Int) -> Int { min(max(0, value), max(0, lines - pageHeight)) }
        helpScroll = clamp(helpScroll, lines: HelpContent.lines(for: keymap).count)
        if var overlay {
            overlay.scroll = clamp(overlay.scroll, lines: overlay.lines.count)
            self.overlay = overlay
        }
        switch mode {
        case .list: break
        case .rules(let cursor):
            mode = .rules(cursor: min(max(0, cursor), max(0, rules.entries.count - 1)))
        case .detail(var detail):
            detail.scroll = clamp(detail.scroll, lines: detailLines(detail).count)
            mode = .detail(detail)
        case .events(let scroll):
            mode = .events(scroll: clamp(scroll, lines: session.events.count))
        case .output(let scroll):
            mode = .output(scroll: clamp(scroll, lines: commandRun?.shownLines.count ?? 0))
        case .insights(var view):
            let count = view.showsChanges ? baseline?.changes.count ?? 0 : insights.rows(view.dimension, by: view.column).count
            view.cursor = min(max(0, view.cursor), max(0, count - 1))
            mode = .insights(view)
        case .diff(var diff):
            diff.scroll = clamp(diff.scroll, lines: diffLines(diff).count)
            mode = .diff(diff)
        }
    }
}
