import Foundation
import InspectorIngest
import WireProtocol

extension Reducer {
    // MARK: - Insights

    /// Counts the flows an inbox batch finished into the insights, then
    /// merges the batch's durations: a batch costs what it brought, not
    /// what came before. A flow finishes once: with its `flowFinished`, or
    /// already in its `flowStarted` (a file's flows, a start the agent
    /// folded its end into). `z` (clear) starts them again; flows evicted
    /// beyond `--max-flows` stay counted.
    static func countFinished(_ events: [InboxEvent], cleared: Bool, in state: inout AppState) {
        if cleared { state.insights = Insights() }
        let store = state.session.store
        for case let .message(_, message) in events {
            let id: FlowID
            switch message {
            case .flowStarted(let log) where log.state.isFinal: id = log.id
            case .flowFinished(let finished): id = finished.id
            default: continue
            }
            guard let sequence = store.sequence(of: id), let record = store[sequence], record.log.state.isFinal else { continue }
            state.insights.add(record.log, service: store.origin(of: record)?.app)
        }
        state.insights.settle()
    }

    static func insightsCommand(_ command: Command, in state: inout AppState) -> Effect {
        guard case .insights(var view) = state.mode else { return .none }
        let rows = state.insights.rows(view.dimension, by: view.column, ascending: view.ascending)
        let count = view.showsChanges ? state.baseline?.changes.count ?? 0 : rows.count
        let page = max(1, state.pageHeight - 2)
        func move(to row: Int) { view.cursor = min(max(0, row), max(0, count - 1)) }
        switch command {
        case .cursorDown: move(to: view.cursor + 1)
        case .cursorUp: move(to: view.cursor - 1)
        case .cursorTop: move(to: 0)
        case .cursorBottom: move(to: rows.count - 1)
        case .pageDown: move(to: view.cursor + page)
        case .pageUp: move(to: view.cursor - page)
        case .insightsDimension:
            // With a baseline, the changes are the tab after the last dimension.
            let all = Insights.Dimension.allCases
            let next = (all.firstIndex(of: view.dimension)! + 1) % all.count
            if state.baseline != nil, !view.showsChanges, next == 0 {
                view.showsChanges = true
                state.baseline?.compare(with: state.session.store.allRecords.map(\.log))
            } else {
                view.showsChanges = false
                view.dimension = all[next]
            }
            view.cursor = 0
        case .insightsSort:
            let all = Insights.Column.allCases
            view.column = all[(all.firstIndex(of: view.column)! + 1) % all.count]
            view.cursor = 0
        case .insightsReverse:
            view.ascending.toggle()
            view.cursor = 0
        case .insightsFilter where view.showsChanges:
            guard let changes = state.baseline?.changes, changes.indices.contains(view.cursor) else { return .none }
            guard let filter = changes[view.cursor].filter else {
                state.notice = Notice(text: "The route is gone: this run has no flow of it to show", isError: false)
                return .none
            }
            applyFilter(filter, in: &state)
            state.mode = .list
            state.syncCursor()
            return .none
        case .insightsFilter:
            guard rows.indices.contains(view.cursor) else { return .none }
            applyFilter(rows[view.cursor].filter, in: &state)
            state.mode = .list
            state.syncCursor()
            return .none
        default:
            return commonCommand(command, in: &state)
        }
        state.mode = .insights(view)
        return .none
    }

    // MARK: - The wrapped command

    static func commandAction(_ action: Action, in state: inout AppState) {
        switch action {
        case .commandStarted(let commandLine):
            state.commandRun = CommandRun(commandLine: commandLine)
            state.session.note("Running \(commandLine); O shows its output", level: .info, at: state.clock)
        case .commandOutput(let bytes):
            state.commandRun?.append(bytes)
            // Following the end, as a terminal does, unless scrolled up.
            if case .output(let scroll) = state.mode, scroll >= (state.commandRun?.shownLines.count ?? 0) - state.pageHeight - 1 {
                state.mode = .output(scroll: Int.max / 2)
                state.clampScrolls()
            }
        case let .commandEnded(description, succeeded):
            state.commandRun?.end(description, succeeded: succeeded)
            let text = "\(state.commandRun?.commandLine ?? "The command") \(description); Q quits"
            state.session.note(text, level: succeeded ? .info : .error, at: state.clock)
        default:
            break
        }
    }

    static func showOutput(in state: inout AppState) {
        guard state.commandRun != nil else {
            state.notice = Notice(text: "No command: run one with netinspect -- COMMAND [ARGS…]", isError: true)
            return
        }
        state.showsHelp = false
        state.mode = .output(scroll: Int.max / 2)
        state.clampScrolls()
    }
}
