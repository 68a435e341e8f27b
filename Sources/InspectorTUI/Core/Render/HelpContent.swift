/// The help overlay, generated from the keymap (one line per command and
/// context, listing every key bound to it) and the filter language's own
/// summary.
enum HelpContent {
    private static let sections: [(KeyContext, String)] = [
        (.list, "Flow list"),
        (.detail, "Detail view"),
        (.global, "Everywhere"),
        (.prompt, "Typing a search or filter"),
        (.confirm, "Questions"),
    ]

    static func lines(for keymap: Keymap) -> [StyledLine] {
        var lines: [StyledLine] = []
        for (context, title) in sections {
            let rows = keymap.bindings.filter { $0.context == context }
            guard !rows.isEmpty else { continue }
            if !lines.isEmpty { lines.append("") }
            lines.append(StyledLine(title, .heading))
            var seen: [String] = []
            for row in rows where !seen.contains(row.command) {
                seen.append(row.command)
                let keys = rows.filter { $0.command == row.command }.map(\.key).joined(separator: ", ")
                lines.append(StyledLine([Span("  " + keys.fitted(toWidth: 16), .method), Span(row.help)]))
            }
        }
        lines.append("")
        lines.append(StyledLine("Filter expressions (f)", .heading))
        for (syntax, meaning) in FilterExpression.syntaxSummary {
            lines.append(StyledLine([Span("  " + syntax.fitted(toWidth: 22), .method), Span(meaning)]))
        }
        return lines
    }
}
