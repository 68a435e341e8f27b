import Foundation
import WireProtocol

extension DetailContent {
    /// Calls listed on an inbound flow's waterfall before `-` shows the rest.
    static let waterfallCallLimit = 12

    /// An inbound flow's calls on its time line, as a trace viewer draws a
    /// span's children: the parent's bar spans the width, each call a bar
    /// at its start offset, as long as it took. The slowest call and failed
    /// ones stand out by style and are named in the heading, so they read
    /// in monochrome too. Empty when the flow made no calls.
    ///
    /// `now` extends a call still running to the present.
    static func callLines(of parent: NetworkLog, calls: [NetworkLog], width: Int, showsAll: Bool, now: Date?,
                          expandKey: String) -> [StyledLine] {
        guard !calls.isEmpty else { return [] }
        let ordered = calls.sorted { $0.timing.startedAt < $1.timing.startedAt }
        func start(_ call: NetworkLog) -> Double { max(0, call.timing.startedAt.timeIntervalSince(parent.timing.startedAt)) }
        func length(_ call: NetworkLog) -> Double? {
            call.timing.duration ?? now.map { max(0, $0.timeIntervalSince(call.timing.startedAt)) }
        }
        let end = max(parent.timing.duration ?? 0, ordered.map { start($0) + (length($0) ?? 0) }.max() ?? 0)
        let slowest = ordered.filter { $0.timing.duration != nil }.max { $0.timing.duration! < $1.timing.duration! }
        let failed = ordered.filter(isFailure)

        var summary = "Calls made while handling it: \(ordered.count)"
        if let slowest, let duration = slowest.timing.duration {
            summary += "; slowest \(slowest.request.method) \(Format.displayPath(of: slowest.request.url)) \(Format.milliseconds(duration))"
        }
        if !failed.isEmpty { summary += "; \(failed.count) failed" }
        var lines: [StyledLine] = [StyledLine(summary, .heading)]

        let labelWidth = max(12, min(30, width / 3))
        let durationWidth = 10
        let barWidth = max(10, width - labelWidth - durationWidth - 2)
        func bar(from offset: Double, length: Double?, style: Style, fill: String = "█") -> [Span] {
            let scale = end > 0 ? Double(barWidth) / end : 0
            let column = min(Int((offset * scale).rounded()), barWidth - 1)
            let cells = max(1, min(Int(((length ?? 0) * scale).rounded()), barWidth - column))
            return [
                Span(String(repeating: " ", count: column)),
                Span(String(repeating: fill, count: cells), style),
                Span(String(repeating: " ", count: barWidth - column - cells)),
            ]
        }
        func label(_ log: NetworkLog, _ lead: String) -> Span {
            Span((lead + log.request.method + " " + Format.displayPath(of: log.request.url)).fitted(toWidth: labelWidth) + " ")
        }
        func duration(_ log: NetworkLog) -> Span {
            let text = log.timing.duration.map(Format.milliseconds) ?? (length(log).map { Format.milliseconds($0) + "…" } ?? "…")
            return Span(" " + text.fitted(toWidth: durationWidth - 1, alignRight: true))
        }
        lines.append(StyledLine([label(parent, Renderer.inboundMarker)] + bar(from: 0, length: parent.timing.duration ?? end, style: .dim, fill: "━")
            + [duration(parent)]))
        let shown = showsAll ? ordered : Array(ordered.prefix(waterfallCallLimit))
        for (index, call) in shown.enumerated() {
            let style: Style = isFailure(call) ? .failed : call.id == slowest?.id && ordered.count > 1 ? .barSlowest
                : call.timing.duration == nil ? .pending : .barReceiving
            let lead = index == ordered.count - 1 ? "└ " : "├ "
            lines.append(StyledLine([label(call, lead)] + bar(from: start(call), length: length(call), style: style) + [duration(call)]))
        }
        if ordered.count > shown.count {
            lines.append(StyledLine("└ … \(ordered.count - shown.count) more calls (\(expandKey) shows them all)", .dim))
        } else if showsAll, ordered.count > waterfallCallLimit {
            lines.append(StyledLine("  (\(expandKey) shows the first \(waterfallCallLimit) only)", .dim))
        }
        return lines
    }

    /// A call that failed, was cancelled, or answered with a server error.
    private static func isFailure(_ log: NetworkLog) -> Bool {
        switch log.state {
        case .failed, .cancelled: true
        case .pending, .responded, .completed: log.error != nil || (log.response?.statusCode ?? 0) >= 500
        }
    }
}

extension AppState {
    /// What the detail view shows above a tab, for flows in a parent/child
    /// relation: on the Request tab, which way the flow went and what it
    /// caused or was caused by; on the Timing tab, an inbound flow's calls
    /// on its time line. Not memoised with the tab's lines: a call arriving
    /// or finishing changes it without changing the parent.
    func relationLines(_ detail: DetailState) -> [StyledLine] {
        guard let log = session.store[detail.sequence]?.log else { return [] }
        switch detail.tab {
        case .request:
            var text: [Span] = []
            if log.isInbound {
                let count = calls(of: detail.sequence).count
                text.append(Span(Renderer.inboundMarker + " Received by the app", .inbound))
                if count > 0 {
                    let key = keymap.key(for: .timingTab, in: .detail) ?? ":timing"
                    text.append(Span("; made \(count) call\(count == 1 ? "" : "s") while handling it (\(key): waterfall)"))
                }
            }
            if let parentID = log.parentID {
                let parent = session.store.sequence(of: parentID).flatMap { session.store[$0]?.log }
                let name = parent.map { "\(Renderer.inboundMarker)\($0.request.method) \(Format.displayPath(of: $0.request.url))" }
                    ?? "flow \(parentID) (not in the list)"
                text.append(Span("Made while the app handled " + name, .dim))
            }
            return text.isEmpty ? [] : [StyledLine(text), ""]
        case .timing:
            let calls = log.isInbound ? calls(of: detail.sequence) : []
            let lines = DetailContent.callLines(of: log, calls: calls, width: size.width, showsAll: detail.showsAllCalls,
                                                now: now, expandKey: keymap.key(for: .toggleCollapse, in: .detail) ?? ":collapse")
            return lines.isEmpty ? [] : lines + [""]
        case .response, .grpc, .messages:
            return []
        }
    }

    /// The flows made while the app handled the flow at `sequence`, in store
    /// order. A scan rather than an index: only an inbound flow's detail
    /// asks, once per frame, and a scan cannot go stale when a parent
    /// arrives after its children.
    func calls(of sequence: Int) -> [NetworkLog] {
        guard let parent = session.store[sequence]?.log else { return [] }
        return session.store.allRecords.compactMap { record in
            !record.isDeleted && record.sequence != sequence && record.log.parentID == parent.id ? record.log : nil
        }
    }
}
