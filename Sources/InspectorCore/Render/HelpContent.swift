import FlowFilter
/// The help overlay, generated from the keymap (one line per command and
/// context, listing every key bound to it and the command's name in the
/// `:` bar), the commands that have no key, and the filter language's own
/// summary.
enum HelpContent {
    private static let sections: [(KeyContext, String)] = [
        (.list, "Flow list"),
        (.detail, "Detail view"),
        (.rules, "Rules view (R)"),
        (.insights, "Insights view (s)"),
        (.global, "Everywhere"),
        (.prompt, "Typing a search, filter, comment, rule or command"),
        (.confirm, "Questions"),
    ]

    static func lines(for keymap: Keymap) -> [StyledLine] {
        var lines: [StyledLine] = []
        // As wide as the widest name, so the help teaches whole `:` names.
        let nameWidth = keymap.bindings.map { DisplayWidth.of(commandName($0.command)) }.max() ?? 0
        for (context, title) in sections {
            let rows = keymap.bindings.filter { $0.context == context }
            guard !rows.isEmpty else { continue }
            if !lines.isEmpty { lines.append("") }
            lines.append(StyledLine(title, .heading))
            var seen: [String] = []
            for row in rows where !seen.contains(row.command) {
                seen.append(row.command)
                let keys = rows.filter { $0.command == row.command }.map(\.key).joined(separator: ", ")
                lines.append(StyledLine([Span("  " + keys.fitted(toWidth: 12), .method), Span(commandName(row.command).fitted(toWidth: nameWidth), .dim),
                                         Span(" " + row.help)]))
            }
        }
        let bound = Set(keymap.bindings.map(\.command))
        let unbound = CommandBar.entries.filter { !bound.contains($0.command.rawValue) && !CommandBar.notFromTheBar.contains($0.command) }
        if !unbound.isEmpty {
            lines.append("")
            lines.append(StyledLine("Commands without a key (type : then the name; Tab completes)", .heading))
            for entry in unbound {
                let usage = ":" + (entry.alias ?? entry.command.rawValue) + (entry.argument.map { " " + $0 } ?? "")
                lines.append(StyledLine([Span("  " + usage.fitted(toWidth: 26), .method), Span(" " + entry.help)]))
            }
        }
        lines.append("")
        lines.append(StyledLine("The status bar", .heading))
        for (word, meaning) in StatusBarLegend.entries {
            lines.append(StyledLine([Span("  " + word.fitted(toWidth: 18), .method), Span(meaning)]))
        }
        lines.append("")
        lines.append(StyledLine("Filter expressions (f)", .heading))
        for (syntax, meaning) in FilterExpression.syntaxSummary {
            lines.append(StyledLine([Span("  " + syntax.fitted(toWidth: 22), .method), Span(meaning)]))
        }
        return lines
    }

    /// What to type in the `:` bar for a command: its alias, else its keymap name.
    private static func commandName(_ command: String) -> String {
        guard let parsed = Command(rawValue: command), !CommandBar.notFromTheBar.contains(parsed) else { return "" }
        return ":" + (CommandBar.entry(for: parsed)?.alias ?? command)
    }
}
