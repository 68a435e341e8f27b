import Foundation
import WireProtocol

/// A column of the flow list; `:columns` chooses which are shown, by these names.
enum ListColumn: String, Sendable, CaseIterable {
    case time, app, method, code, host, path, type, size, duration, bar

    /// The columns shown unless the person chose others (`app` only with several apps).
    static let standard: [ListColumn] = [.time, .app, .method, .code, .host, .path, .type, .size, .duration, .bar]

    var title: String {
        switch self {
        case .time: "Time"
        case .app: "App"
        case .method: "Method"
        case .code: "Code"
        case .host: "Host"
        case .path: "Path"
        case .type: "Type"
        case .size: "Size"
        case .duration: "Dur"
        case .bar: ""
        }
    }

    var alignRight: Bool { self == .code || self == .size || self == .duration }
}

extension Renderer {
    /// One column of the flow list, sized.
    struct Column {
        var kind: ListColumn
        var width: Int
    }

    /// Column widths for a screen width, never for the rows on screen, so
    /// columns stay put while scrolling: fixed widths that grow with the
    /// screen, the path takes the rest; when that is under a quarter of a
    /// narrow row (a third of a wide one), the type and host narrow, the bar and the type go, then host and
    /// app give way, and the size last.
    static func columns(_ kinds: [ListColumn], width: Int) -> [Column] {
        func natural(_ kind: ListColumn) -> Int {
            switch kind {
            case .time: 8
            case .method: 7
            case .code: 4
            case .size: 7
            case .duration: 6
            case .bar: width >= 100 ? 10 : 5
            case .host: width >= 140 ? 32 : width >= 100 ? 24 : 20
            case .type: width >= 100 ? 16 : 10
            case .app: width >= 100 ? 14 : 10
            case .path: 0
            }
        }
        var columns = kinds.map { Column(kind: $0, width: natural($0)) }
        let minimumPath = max(8, width >= 100 ? width / 3 : width / 4)
        func pathRoom() -> Int {
            width - columns.filter { $0.kind != .path }.reduce(0) { $0 + $1.width } - max(0, columns.count - 1)
        }
        enum Step { case drop(ListColumn), shrink(ListColumn, to: Int) }
        let steps: [Step] = [
            .shrink(.type, to: 10), .shrink(.host, to: 20), .drop(.bar), .drop(.type),
            .shrink(.host, to: 16), .shrink(.app, to: 6), .shrink(.host, to: 12), .drop(.app), .drop(.size),
        ]
        for step in steps where kinds.contains(.path) && pathRoom() < minimumPath {
            switch step {
            case .drop(let kind): columns.removeAll { $0.kind == kind }
            case let .shrink(kind, floor):
                guard let index = columns.firstIndex(where: { $0.kind == kind }) else { continue }
                columns[index].width = max(floor, columns[index].width - (minimumPath - pathRoom()))
            }
        }
        if let path = columns.firstIndex(where: { $0.kind == .path }) {
            columns[path].width = max(1, pathRoom())
        } else if let last = columns.indices.last {
            // Without a path column the last column takes the rest of the row.
            columns[last].width = max(columns[last].width, columns[last].width + pathRoom())
        }
        return columns
    }

    static func drawList(_ state: AppState, on screen: inout Screen) {
        let showsApp = state.session.connectedAgents > 1 || Set(state.session.agents.map(\.hello.appName)).count > 1
        var kinds = state.chosenColumns ?? ListColumn.standard
        if state.chosenColumns == nil, !showsApp { kinds.removeAll { $0 == .app } }
        let rows = state.rows
        let visible = rows[min(state.listTop, rows.count)..<min(rows.count, state.listTop + state.listHeight)]
        let records = visible.map { state.session.store[$0] }
        let longest = records.compactMap { $0?.log.timing.duration }.max() ?? 0
        let barWidth = screen.size.width >= 100 ? 10 : 5
        let cells = records.enumerated().map { offset, record in
            record.map {
                cellSpans($0, state: state, longest: longest, barWidth: barWidth,
                          treePrefix: treePrefix(row: state.listTop + offset, rows: rows, state: state))
            } ?? [:]
        }
        // Column 0 holds the mark (●) or a comment sign (✎); the grid starts after it.
        let columns = columns(kinds, width: screen.size.width - 1)
        screen.fill(row: 0, style: .header)
        var x = 1
        for column in columns {
            screen.write(column.kind.title.fitted(toWidth: column.width, alignRight: column.kind.alignRight), row: 0, column: x, style: .header)
            x += column.width + 1
        }
        guard !rows.isEmpty else {
            drawEmptyList(state, on: &screen)
            return
        }
        for (offset, record) in records.enumerated() {
            let row = 1 + offset
            guard let record else {
                screen.write("(evicted)", row: row, column: 1, style: .dim)
                continue
            }
            if record.annotation.isMarked {
                screen.write("●", row: row, column: 0, style: .mark)
            } else if record.annotation.comment != nil {
                screen.write("✎", row: row, column: 0, style: .comment)
            } else if state.diffBase == record.sequence {
                screen.write("◆", row: row, column: 0, style: .mark)
            }
            var x = 1
            for column in columns {
                let span = cells[offset][column.kind] ?? Span("")
                let text = column.kind == .app ? appFitted(span.text, toWidth: column.width) : span.text
                screen.write(text.fitted(toWidth: column.width, alignRight: column.kind.alignRight), row: row, column: x, style: span.style, limit: column.width)
                if column.kind == .path, let comment = record.annotation.comment {
                    let used = DisplayWidth.of(span.text)
                    if used + 3 < column.width {
                        screen.write("  # " + comment, row: row, column: x + used, style: .comment, limit: column.width - used)
                    }
                }
                x += column.width + 1
            }
            if state.listTop + offset == state.cursor {
                screen.restyle(row: row, from: 0, width: screen.size.width, style: .selected)
            }
        }
    }

    private static func cellSpans(_ record: FlowStore.Record, state: AppState, longest: Double, barWidth: Int,
                                  treePrefix: String) -> [ListColumn: Span] {
        let log = record.log
        var path = log.grpc.map(Format.grpcName) ?? Format.displayPath(of: log.request.url)
        let summaries = state.callSummaries.summary(of: record)
        if let operation = summaries.graphQL { path += "  ⟨\(operation)⟩" }
        let call = summaries.jsonRPC
        if let call { path += "  ⟨\(call.text)⟩" }
        if let marker = changeMarker(log.changes) { path = marker + " " + path }
        if let hold = record.hold { path = "⏸ " + (hold.phase == .request ? "request " : "response ") + path }
        path = treePrefix + path
        let agents = state.session.agents
        let name = record.agent.flatMap { agents.indices.contains($0) ? agents[$0].hello.label(among: agents.lazy.map(\.hello)) : nil }
        return [
            .time: Span(Format.time(log.timing.startedAt, in: state.timeZone), .dim),
            .app: Span(name ?? "?", .dim),
            .method: log.isInbound ? Span(inboundMarker + Format.method(of: log), .inbound) : Span(Format.method(of: log), .method),
            .code: record.hold == nil ? listStatusSpan(log) : Span("HELD", .warning),
            // Read once, as the flow arrived: `host:port` when the URL names a port.
            .host: Span(record.port.map { PeerAddress.text(host: record.host, port: $0) } ?? record.host, .host),
            .path: pathSpan(path, log, callFailed: call?.isFailure == true),
            .type: Span(log.grpc.map { Format.grpcKind($0) } ?? Format.shortContentType(log.response?.mimeType ?? log.response?.headers.first("Content-Type")), .dim),
            .size: Span(Format.responseSize(log) ?? "", .normal),
            .duration: durationSpan(log, now: state.now),
            .bar: timingBar(log.timing, longest: longest, width: barWidth),
        ]
    }

    /// An app's label cut to the column from the middle of its name: the
    /// `[pid]` that tells two instances apart is what must stay.
    static func appFitted(_ label: String, toWidth width: Int) -> String {
        guard DisplayWidth.of(label) > width, label.hasSuffix("]"), let open = label.lastIndex(of: "[") else { return label }
        let suffix = label[open...]
        let room = width - DisplayWidth.of(String(suffix))
        guard room > 1 else { return String(suffix) }
        // The name is wider than `room` here, so it ends with "…".
        return String(label[..<open]).truncated(toWidth: room) + suffix
    }

    /// The code column: a gRPC status that is not OK is `✗` and its number
    /// (the name is too long for the column; the path shows it), so a
    /// failed call never reads as the HTTP 200 that carried it.
    private static func listStatusSpan(_ log: NetworkLog) -> Span {
        if let status = log.grpc?.status, !status.isOK { return Span("✗\(status.code)", .status5xx) }
        return statusSpans(log)[0]
    }

    /// The path, and after a gRPC call's name its status when it failed.
    /// A failed gRPC call, JSON-RPC error or tool error reads as one: the
    /// HTTP status says 200 for all of them.
    private static func pathSpan(_ path: String, _ log: NetworkLog, callFailed: Bool) -> Span {
        if let status = log.grpc?.status, !status.isOK { return Span(path + "  " + status.name, .status5xx) }
        return Span(path, callFailed ? .status5xx : .normal)
    }

    /// Put before the method of a request the app received, so a server's
    /// incoming request never passes for a call it made.
    static let inboundMarker = "←"

    /// The nesting drawn before a path in tree mode: `▾`/`▸ … [+2]` on a
    /// parent (expanded, collapsed), `├`/`└` on its children, indented by depth.
    private static func treePrefix(row: Int, rows: [Int], state: AppState) -> String {
        guard let tree = state.tree, rows.indices.contains(row) else { return "" }
        let sequence = rows[row]
        let depth = tree.depth[sequence] ?? 0
        var prefix = String(repeating: "  ", count: max(0, depth - 1))
        if depth > 0 {
            let next = row + 1 < rows.count ? tree.depth[rows[row + 1]] ?? 0 : 0
            prefix += next >= depth ? "├ " : "└ "
        }
        if let children = tree.childCount[sequence] {
            let collapsed = state.collapsesAll || state.collapsedParents.contains(sequence)
            prefix += collapsed ? "▸[+\(children)] " : "▾ "
        }
        return prefix
    }

    /// Server replay's mark, in the list and on `--dump` lines.
    static let serverReplayMarker = "≈"

    /// A traffic rule's mark on the path, so a changed flow never passes for
    /// the app's own: `✚` written by a person (compose), `≡` answered
    /// locally, `≈` answered from a recording (server replay), `→` sent
    /// elsewhere, `↻` a replay, `∿` slowed or failed by a network
    /// condition, `±` headers edited.
    static func changeMarker(_ changes: FlowChanges?) -> String? {
        guard let changes else { return nil }
        if changes.composed == true { return "✚" }
        if changes.edited != nil { return "✎" }
        if changes.mockedFrom != nil { return "≡" }
        if changes.serverReplay != nil { return serverReplayMarker }
        if changes.replayOf != nil { return "↻" }
        if changes.originalURL != nil { return "→" }
        if changes.condition != nil { return "∿" }
        return "±"
    }

    /// The duration, or for a flow still running the time since it started,
    /// or for one streaming the time since its last part.
    private static func durationSpan(_ log: NetworkLog, now: Date?) -> Span {
        if let duration = log.timing.duration { return Span(Format.duration(duration)) }
        guard !log.state.isFinal else { return Span("") }
        if Format.isStreaming(log) { return Span(now.map { Format.sinceLastPart(log, now: $0) } ?? "⇣", .pending) }
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
