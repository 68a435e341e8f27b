import Foundation
import WireProtocol

/// Draws the state as a grid of styled cells. Pure: the same state and size
/// always give the same screen.
///
/// Layout, top to bottom: the list header (or the detail title and tabs),
/// the content, one line for the prompt or the latest note or event, and
/// the status bar.
///
/// ```swift
/// let screen = Renderer.render(state, size: Size(width: 80, height: 24))
/// terminal.blit(screen)
/// ```
package enum Renderer {
    /// Renders the whole screen.
    package static func render(_ state: AppState, size: Size) -> Screen {
        var state = state
        if state.size != size {
            state.size = size
            state.syncCursor()
            state.clampScrolls()
        }
        var screen = Screen(size: size)
        guard size.width > 0, size.height > 0 else { return screen }
        switch state.mode {
        case .list: drawList(state, on: &screen)
        case .detail(let detail): drawDetail(state, detail, on: &screen)
        case .events(let scroll): drawEvents(state, scroll: scroll, on: &screen)
        case .diff(let diff): drawDiff(state, diff, on: &screen)
        case .rules(let cursor): drawRules(state, cursor: cursor, on: &screen)
        case .output(let scroll): drawOutput(state, scroll: scroll, on: &screen)
        case .insights(let view): drawInsights(state, view, on: &screen)
        }
        if state.showsHelp { drawHelp(state, on: &screen) }
        if let overlay = state.overlay { drawOverlay(overlay, on: &screen) }
        drawMessageLine(state, on: &screen)
        drawStatusBar(state, on: &screen)
        return screen
    }

    // MARK: Detail

    private static func drawDetail(_ state: AppState, _ detail: DetailState, on screen: inout Screen) {
        if let record = state.session.store[detail.sequence] {
            let log = record.log
            var title = [Span(Format.method(of: log) + " ", .method), Span(log.request.url, .title)]
            title.append(contentsOf: statusSpans(log).map { Span("  " + $0.text, $0.style) })
            screen.write(StyledLine(title), row: 0)
        }
        var x = 0
        for tab in DetailTab.tabs(for: state.session.store[detail.sequence]?.log) {
            let label = " \(tab.rawValue + 1) \(tab.title) "
            x += screen.write(label, row: 1, column: x, style: tab == detail.tab ? .tabActive : .tabInactive) + 1
        }
        if let annotation = state.session.store[detail.sequence]?.annotation {
            if annotation.isMarked { x += screen.write(" ● marked", row: 1, column: x, style: .mark) }
            if let comment = annotation.comment { screen.write("  Comment: " + comment, row: 1, column: x, style: .comment) }
        }
        let lines = state.detailLines(detail)
        drawPage(lines, from: detail.scroll, top: 2, highlighting: detail.search, on: &screen)
    }

    private static func drawDiff(_ state: AppState, _ diff: DiffState, on screen: inout Screen) {
        func describe(_ sequence: Int) -> [Span] {
            guard let record = state.session.store[sequence] else { return [Span("(gone)", .dim)] }
            let log = record.log
            return [Span(log.request.method + " ", .method), Span(Format.displayPath(of: log.request.url)),
                    Span(" " + (statusSpans(log).first?.text ?? ""), statusSpans(log).first?.style ?? .normal),
                    Span(" " + Format.time(log.timing.startedAt, in: state.timeZone), .dim)]
        }
        screen.write(StyledLine([Span("Diff  ", .title), Span("base ", .diffRemoved)] + describe(diff.base)), row: 0)
        screen.write(StyledLine([Span("      ", .title), Span("other ", .diffAdded)] + describe(diff.other)
            + [Span("   (q: back)", .dim)]), row: 1)
        drawPage(state.diffLines(diff), from: diff.scroll, top: 2, on: &screen)
    }

    /// Draws lines into the content area (from `top` to above the two bottom
    /// lines), with a scroll position indicator when they do not all fit.
    static func drawPage(_ lines: [StyledLine], from scroll: Int, top: Int, highlighting search: String? = nil, on screen: inout Screen) {
        let height = max(0, screen.size.height - 2 - top)
        let first = min(max(0, scroll), max(0, lines.count - height))
        for (offset, line) in lines.dropFirst(first).prefix(height).enumerated() {
            screen.write(line, row: top + offset)
            if let search, !search.isEmpty { highlight(search, in: line.text, row: top + offset, on: &screen) }
        }
        if lines.count > height, height > 0 {
            let indicator = " \(first + 1)-\(min(lines.count, first + height))/\(lines.count) "
            screen.write(indicator, row: top - 1, column: screen.size.width - DisplayWidth.of(indicator), style: .dim)
        }
    }

    private static func highlight(_ search: String, in text: String, row: Int, on screen: inout Screen) {
        let lowered = text.lowercased()
        guard lowered.count == text.count else { return }
        var start = lowered.startIndex
        while let range = lowered.range(of: search.lowercased(), range: start..<lowered.endIndex) {
            let column = DisplayWidth.of(lowered[..<range.lowerBound])
            screen.restyle(row: row, from: column, width: DisplayWidth.of(lowered[range]), style: .match)
            start = range.upperBound
        }
    }

    // MARK: Events and help

    private static func drawEvents(_ state: AppState, scroll: Int, on screen: inout Screen) {
        screen.write("Event log  (q: back)", row: 0, style: .title)
        let lines = state.session.events.map { event in
            StyledLine([
                Span(Format.time(event.date, in: state.timeZone) + "  ", .dim),
                Span(event.text, event.level == .error ? .error : .normal),
            ])
        }
        if lines.isEmpty { screen.write("No events yet.", row: 2, style: .dim) }
        drawPage(lines, from: scroll, top: 1, on: &screen)
    }

    private static func drawHelp(_ state: AppState, on screen: inout Screen) {
        for row in 0..<max(0, screen.size.height - 2) { screen.fill(row: row, style: .normal) }
        screen.write("netinspect keys  (?, q or Esc closes; j/k scroll)", row: 0, style: .title)
        drawPage(HelpContent.lines(for: state.keymap), from: state.helpScroll, top: 1, on: &screen)
    }

    private static func drawOverlay(_ overlay: TextOverlay, on screen: inout Screen) {
        for row in 0..<max(0, screen.size.height - 2) { screen.fill(row: row, style: .normal) }
        screen.write(overlay.title, row: 0, style: .title)
        drawPage(overlay.lines.map { StyledLine([Span($0, .normal)]) }, from: overlay.scroll, top: 1, on: &screen)
    }

    // MARK: Bottom lines

    private static func drawMessageLine(_ state: AppState, on screen: inout Screen) {
        let row = screen.size.height - 2
        guard row >= 0 else { return }
        if let prompt = state.prompt {
            let used = screen.write(prompt.label, row: row, column: 0, style: .prompt)
            let visible = String(prompt.text.suffix(max(0, screen.size.width - used - 2)))
            // Offered text is shown selected: the first key typed replaces it.
            let typed = screen.write(visible, row: row, column: used, style: prompt.isSelected ? .selected : .normal)
            screen.write("▏", row: row, column: used + typed, style: .prompt)
            // What was wrong with the text last accepted, above it while it is fixed.
            if let notice = state.notice, notice.isError, row >= 1 {
                screen.fill(row: row - 1, style: .normal)
                screen.write(notice.text, row: row - 1, column: 0, style: .error)
            }
            if prompt.purpose == .command {
                let candidates = CommandBar.candidates(prompt.text)
                let hint = prompt.text.isEmpty ? "Tab completes; :help lists every command"
                    : candidates.count == 1 ? "" : candidates.prefix(8).joined(separator: " ")
                screen.write(hint, row: row, column: used + typed + 3, style: .dim)
            }
        } else if let confirmation = state.confirmation {
            let question = switch confirmation {
            case .clearFlows: "Clear all \(state.session.store.count) flows? (y/n)"
            case .quit: "Quit netinspect? (y/n)"
            case .deleteRule(let index):
                "Delete rule \(index + 1), \(state.rules.entries.indices.contains(index) ? state.rules.entries[index].text : "?")? (y/n)"
            }
            screen.write(question, row: row, column: 0, style: .warning)
        } else if let notice = state.notice {
            screen.write(notice.text, row: row, column: 0, style: notice.isError ? .error : .message)
        } else if let event = state.session.events.last {
            let time = Format.time(event.date, in: state.timeZone)
            let used = screen.write(time + " ", row: row, column: 0, style: .dim)
            screen.write(event.text, row: row, column: used, style: event.level == .error ? .error : .message)
        }
    }

    private static func drawStatusBar(_ state: AppState, on screen: inout Screen) {
        let row = screen.size.height - 1
        let session = state.session
        var parts = ["\(state.rows.count)/\(session.store.count) flows"]
        if let run = state.commandRun { parts.append(commandStatus(run)) }
        if let filter = state.filterDescription { parts.append("filter: \(filter)") }
        if let intercept = state.interceptFilter { parts.append("intercept: \(intercept)") }
        if let replay = session.serverReplay { parts.append(replay.statusText) }
        let held = session.store.heldSequences().count
        if held > 0 { parts.append("HELD \(held)") }
        parts.append("sort: \(state.sortDescription)")
        if state.tree != nil { parts.append("nested") }
        if let paused = state.pausedRows {
            let hidden = state.view.count - paused.count
            parts.append(hidden > 0 ? "PAUSED (+\(hidden))" : "PAUSED")
        } else {
            parts.append(state.follows ? "follow" : "no follow")
        }
        if session.listening.isEmpty, let file = session.agents.first(where: { $0.connection == .file }) {
            parts.append("file: \(file.hello.appName)")
        } else {
            let agents = session.connectedAgents
            parts.append(agents == 1 ? "1 agent" : "\(agents) agents")
        }
        if session.droppedEvents > 0 { parts.append("dropped \(session.droppedEvents)") }
        if session.store.evictedFlows > 0 { parts.append("evicted \(session.store.evictedFlows)") }
        if session.store.unknownFlowEvents > 0 { parts.append("ignored \(session.store.unknownFlowEvents)") }
        if !session.listening.isEmpty { parts.append(session.listening.map(\.description).joined(separator: " ")) }
        let help = " ?:help "
        screen.fill(row: row, style: .statusBar)
        screen.write(" " + parts.joined(separator: " │ "), row: row, column: 0, style: .statusBar,
                     limit: screen.size.width - DisplayWidth.of(help))
        screen.write(help, row: row, column: screen.size.width - DisplayWidth.of(help), style: .statusBar)
    }

    /// The status column of a flow: the code, or its state when it has none.
    static func statusSpans(_ log: NetworkLog) -> [Span] {
        let label = Format.statusLabel(log)
        if let status = log.grpc?.status { return [Span(label, Format.style(forGRPC: status))] }
        switch log.state {
        case .failed, .cancelled: return [Span(label, .failed)]
        case _ where log.grpc != nil: return [Span(label, .pending)]
        case _ where Format.isStreaming(log):
            return [Span(label, log.response.map { Format.style(forStatus: $0.statusCode) } ?? .pending), Span(Format.streamingLabel, .pending)]
        default: return [Span(label, log.response.map { Format.style(forStatus: $0.statusCode) } ?? .pending)]
        }
    }
}
