extension Renderer {
    // MARK: Insights

    static func drawInsights(_ state: AppState, _ view: InsightsViewState, on screen: inout Screen) {
        if view.showsChanges, let baseline = state.baseline { return drawChanges(baseline, view, on: &screen) }
        let width = screen.size.width
        let rows = state.insights.rows(view.dimension, by: view.column, ascending: view.ascending)
        let tabs = (Insights.Dimension.allCases.map { $0 == view.dimension ? "[\($0.rawValue)]" : $0.rawValue }
            + (state.baseline == nil ? [] : ["changes"])).joined(separator: " ")
        screen.write(StyledLine([
            Span("Insights by \(tabs)", .title),
            Span("  \(state.insights.count) flows, sort: \(view.column.rawValue)\(view.ascending ? "↑" : "↓")  (tab: group by, o: sort, enter: show flows, q: back)", .dim),
        ]), row: 0)
        screen.write(InsightsTable.header(width: width), row: 1, style: .header)
        guard !rows.isEmpty else {
            screen.write("No finished flows yet.", row: 3, style: .dim)
            return
        }
        let height = max(1, screen.size.height - 4)
        let top = max(0, min(view.cursor - height + 1, rows.count - height))
        for (offset, group) in rows.dropFirst(top).prefix(height).enumerated() {
            let index = top + offset
            let style: Style = index == view.cursor ? .selected : group.errors > 0 ? .error : .normal
            screen.write(InsightsTable.row(group, width: width), row: 2 + offset, style: style)
        }
    }

    /// The changes tab: a row a change against the baseline, as `--baseline` prints them.
    private static func drawChanges(_ baseline: BaselineView, _ view: InsightsViewState, on screen: inout Screen) {
        let tabs = Insights.Dimension.allCases.map(\.rawValue).joined(separator: " ") + " [changes]"
        screen.write(StyledLine([
            Span("Insights by \(tabs)", .title),
            Span("  \(baseline.changes.count) against \(baseline.name), \(baseline.comparedFlows) flow\(baseline.comparedFlows == 1 ? "" : "s") as of this tab"
                + "  (tab: group by, enter: show flows, q: back)", .dim),
        ]), row: 0)
        guard !baseline.changes.isEmpty else {
            screen.write("No change against the baseline.", row: 2, style: .dim)
            return
        }
        let lines = RunChangeTable.text(baseline.changes, baseline: baseline.name, width: screen.size.width).dropFirst()
        let height = max(1, screen.size.height - 3)
        let top = max(0, min(view.cursor - height + 1, lines.count - height))
        for (offset, line) in lines.dropFirst(top).prefix(height).enumerated() {
            screen.write(line, row: 1 + offset, style: top + offset == view.cursor ? .selected : .normal)
        }
    }

    // MARK: The wrapped command

    static func drawOutput(_ state: AppState, scroll: Int, on screen: inout Screen) {
        guard let run = state.commandRun else { return }
        screen.write(StyledLine([Span("Output of \(run.commandLine)", .title), Span("  (q: back)", .dim)]), row: 0)
        var lines = run.shownLines.map { StyledLine([Span($0, .normal)]) }
        if run.droppedLines > 0 { lines.insert(StyledLine("(\(run.droppedLines) earlier lines dropped)", .dim), at: 0) }
        if let ending = run.ending { lines.append(StyledLine("[\(ending)]", run.succeeded ? .dim : .error)) }
        if lines.isEmpty { screen.write("No output yet.", row: 2, style: .dim) }
        drawPage(lines, from: scroll, top: 1, on: &screen)
    }

    /// The status bar's part for the command: running, or how it ended.
    static func commandStatus(_ run: CommandRun) -> String {
        guard let ending = run.ending else { return "command running (O: output)" }
        return "command \(ending)"
    }
}
