import Foundation
import WireProtocol

extension Renderer {
    /// One column of the flow list.
    struct Column {
        var title: String
        var width: Int
        var alignRight = false
    }

    /// Column widths for a screen width: fixed columns first, host and path
    /// share what remains (2:3).
    static func columns(width: Int, showsApp: Bool) -> [Column] {
        var fixed = [
            Column(title: "Time", width: 8),
            Column(title: "Method", width: 6),
            Column(title: "Code", width: 4, alignRight: true),
            Column(title: "Host", width: 0),
            Column(title: "Path", width: 0),
            Column(title: "Type", width: width >= 100 ? 16 : 8),
            Column(title: "Size", width: 7, alignRight: true),
            Column(title: "Time", width: 6, alignRight: true),
            Column(title: "", width: width >= 100 ? 10 : 5),
        ]
        fixed[7].title = "Dur"
        if showsApp { fixed.insert(Column(title: "App", width: width >= 100 ? 12 : 8), at: 1) }
        let used = fixed.reduce(0) { $0 + $1.width } + fixed.count - 1
        let flexible = max(8, width - used)
        let hostIndex = showsApp ? 4 : 3
        fixed[hostIndex].width = flexible * 2 / 5
        fixed[hostIndex + 1].width = flexible - flexible * 2 / 5
        return fixed
    }

    static func drawList(_ state: AppState, on screen: inout Screen) {
        let showsApp = state.session.connectedAgents > 1 || Set(state.session.agents.map(\.hello.appName)).count > 1
        let columns = columns(width: screen.size.width, showsApp: showsApp)
        screen.fill(row: 0, style: .header)
        var x = 0
        for column in columns {
            screen.write(column.title.fitted(toWidth: column.width, alignRight: column.alignRight), row: 0, column: x, style: .header)
            x += column.width + 1
        }
        let rows = state.rows
        guard !rows.isEmpty else {
            drawEmptyList(state, on: &screen)
            return
        }
        let visible = rows[min(state.listTop, rows.count)..<min(rows.count, state.listTop + state.listHeight)]
        let records = visible.map { state.session.store[$0] }
        let longest = records.compactMap { $0?.log.timing.duration }.max() ?? 0
        for (offset, record) in records.enumerated() {
            let row = 1 + offset
            guard let record else {
                screen.write("(evicted)", row: row, column: 0, style: .dim)
                continue
            }
            let cells = cellSpans(record, state: state, showsApp: showsApp, longest: longest, barWidth: columns.last!.width)
            var x = 0
            for (column, span) in zip(columns, cells) {
                screen.write(span.text.fitted(toWidth: column.width, alignRight: column.alignRight), row: row, column: x, style: span.style, limit: column.width)
                x += column.width + 1
            }
            if state.listTop + offset == state.cursor {
                screen.restyle(row: row, from: 0, width: screen.size.width, style: .selected)
            }
        }
    }

    private static func cellSpans(_ record: FlowStore.Record, state: AppState, showsApp: Bool, longest: Double, barWidth: Int) -> [Span] {
        let log = record.log
        let status = statusSpans(log)[0]
        var cells = [
            Span(Format.time(log.timing.startedAt, in: state.timeZone), .dim),
            Span(log.request.method, .method),
            status,
            Span(record.host, .host),
            Span(Format.displayPath(of: log.request.url)),
            Span(Format.shortContentType(log.response?.mimeType ?? log.response?.headers.first("Content-Type")), .dim),
            Span(log.response?.body.map { Format.size($0.size) } ?? "", .normal),
            durationSpan(log, now: state.now),
            timingBar(log.timing, longest: longest, width: barWidth),
        ]
        if showsApp {
            let name = record.agent.flatMap { state.session.agents.indices.contains($0) ? state.session.agents[$0].hello.appName : nil }
            cells.insert(Span(name ?? "?", .dim), at: 1)
        }
        return cells
    }

    /// The duration, or for a flow still running the time since it started.
    private static func durationSpan(_ log: NetworkLog, now: Date?) -> Span {
        if let duration = log.timing.duration { return Span(Format.duration(duration)) }
        guard !log.state.isFinal else { return Span("") }
        guard let now else { return Span("…", .pending) }
        return Span(Format.duration(max(0, now.timeIntervalSince(log.timing.startedAt))) + "…", .pending)
    }

    /// A small bar scaled to the slowest visible flow: waiting then receiving.
    /// Drawn as one span in the receiving style, the waiting part as a lighter
    /// shade so it reads in monochrome too.
    private static func timingBar(_ timing: Timing, longest: Double, width: Int) -> Span {
        guard let duration = timing.duration, longest > 0, width > 0 else { return Span("") }
        let length = max(1, Int((duration / longest * Double(width)).rounded()))
        let waiting = timing.waiting.map { min(length, Int(($0 + (timing.requestSent ?? 0)) / duration * Double(length))) } ?? 0
        return Span(String(repeating: "░", count: waiting) + String(repeating: "█", count: length - waiting), .barReceiving)
    }

    private static func drawEmptyList(_ state: AppState, on screen: inout Screen) {
        let middle = max(1, state.listHeight / 2 - 1)
        let lines: [StyledLine]
        if state.session.store.isEmpty {
            let address = state.session.listening.first.map(\.description) ?? "the default socket"
            lines = [
                StyledLine("No flows yet.", .title),
                StyledLine("Waiting for agents on \(address)."),
                StyledLine("Run an app that uses CaptureAgent with NETINSPECT=\(address)", .dim),
            ]
        } else {
            lines = [
                StyledLine("No flow matches the filter.", .title),
                StyledLine("\(state.session.store.count) flows are hidden by \(state.filterDescription ?? "the filter"); press c to clear it.", .dim),
            ]
        }
        for (offset, line) in lines.enumerated() {
            let width = DisplayWidth.of(line.text)
            screen.write(line, row: middle + offset, column: max(0, (screen.size.width - width) / 2))
        }
    }
}
