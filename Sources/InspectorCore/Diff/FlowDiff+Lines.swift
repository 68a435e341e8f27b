import Foundation
import Synchronization

extension FlowDiff {
    /// The diff as lines for a screen `width` columns wide: a heading per
    /// section with its count of differences, then one line per row
    /// (`-` only in the base, `+` only in the other, `~` changed, with both
    /// values side by side when they fit, else one under the other).
    package func lines(width: Int) -> [StyledLine] {
        var lines: [StyledLine] = []
        for section in sections {
            if !lines.isEmpty { lines.append("") }
            let count = section.rows.filter { $0.kind != .note }.count
            lines.append(StyledLine([
                Span(section.title, .heading),
                Span(count == 0 ? "  the same" : count == 1 ? "  1 difference" : "  \(count) differences", count == 0 ? .dim : .warning),
            ]))
            let labelWidth = min(max(8, width / 3), section.rows.filter { $0.kind != .note || $0.base != nil }.map { DisplayWidth.of($0.label) }.max() ?? 0)
            let valueWidth = max(8, (width - 2 - labelWidth - 6) / 2)
            let hasColumns = section.rows.contains { $0.kind == .changed || ($0.kind == .note && $0.base != nil && $0.other != nil) }
            if hasColumns {
                lines.append(StyledLine([
                    Span("  " + "".fitted(toWidth: labelWidth) + " │ ", .dim),
                    Span("base".fitted(toWidth: valueWidth), .dim), Span(" │ ", .dim), Span("other", .dim),
                ]))
            }
            for row in section.rows {
                lines += Self.lines(for: row, labelWidth: labelWidth, valueWidth: valueWidth, hasColumns: hasColumns)
            }
        }
        return lines
    }

    /// `hasColumns`: the section draws "base │ other" columns, so a value
    /// only the other flow has goes under "other", never under "base".
    private static func lines(for row: Row, labelWidth: Int, valueWidth: Int, hasColumns: Bool) -> [StyledLine] {
        let label = row.label.fitted(toWidth: labelWidth)
        switch row.kind {
        case .note:
            guard let base = row.base else { return [StyledLine("  " + row.label, .dim)] }
            guard let other = row.other else { return [StyledLine([Span("  " + label + " │ ", .dim), Span(base)])] }
            return [StyledLine([Span("  " + label + " │ ", .dim), Span(base.fitted(toWidth: valueWidth)), Span(" │ ", .dim), Span(other)])]
        case .removed:
            return [StyledLine([Span("- " + label + " │ ", .diffRemoved), Span(row.base ?? "", .diffRemoved)])]
        case .added:
            let skip = hasColumns ? "".fitted(toWidth: valueWidth) + " │ " : ""
            return [StyledLine([Span("+ " + label + " │ ", .diffAdded), Span(skip, .dim), Span(row.other ?? "", .diffAdded)])]
        case .changed:
            let base = row.base ?? "—"
            let other = row.other ?? "—"
            if DisplayWidth.of(base) <= valueWidth, DisplayWidth.of(other) <= valueWidth, DisplayWidth.of(row.label) <= labelWidth {
                return [StyledLine([
                    Span("~ " + label, .diffChanged), Span(" │ ", .dim),
                    Span(base.fitted(toWidth: valueWidth), .diffRemoved), Span(" │ ", .dim), Span(other, .diffAdded),
                ])]
            }
            return [
                StyledLine("~ " + row.label, .diffChanged),
                StyledLine([Span("    base  ", .dim), Span(base, .diffRemoved)]),
                StyledLine([Span("    other ", .dim), Span(other, .diffAdded)]),
            ]
        }
    }
}

extension AppState {
    /// The diff view's lines, wrapped to the screen width; kept while the
    /// two flows and the width stay the same (the view is redrawn on every
    /// event and clock tick, and two large bodies take milliseconds to compare).
    func diffLines(_ diff: DiffState) -> [StyledLine] {
        guard let base = session.store[diff.base], let other = session.store[diff.other] else {
            return [StyledLine("One of the two flows is no longer stored (evicted or cleared).", .warning)]
        }
        let key = DiffLinesKey(base: base.sequence, baseRevision: base.revision, other: other.sequence,
                                     otherRevision: other.revision, width: size.width)
        if let lines = diffCache.lines(for: key) { return lines }
        let lines = FlowDiff(base: base.log, other: other.log).lines(width: size.width).flatMap { $0.wrapped(toWidth: size.width) }
        diffCache.store(lines, for: key)
        return lines
    }
}

/// The diff's lines depend on these alone.
struct DiffLinesKey: Hashable, Sendable {
    var base: Int
    var baseRevision: Int
    var other: Int
    var otherRevision: Int
    var width: Int
}
