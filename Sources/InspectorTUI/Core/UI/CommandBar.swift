import WireProtocol

/// The command bar (`:`): every ``Command`` by name, some with arguments,
/// completion of names and arguments, and the parsing of a typed line.
///
/// A command is named by its keymap name (`flow.mark`, `sort.cycle`) or by
/// a short alias (`mark`, `sort`). Arguments follow after a space:
///
/// ```swift
/// let line = try CommandBar.parse("filter ~c 5xx")   // (.filterPrompt, "~c 5xx")
/// CommandBar.complete("so")                          // "sort "
/// ```
public enum CommandBar {
    /// One command the bar knows.
    public struct Entry: Sendable, Equatable {
        /// The command run.
        public var command: Command
        /// The short name typed in the bar, when it has one.
        public var alias: String?
        /// How the argument is written, e.g. `EXPRESSION` or `[FILE]`; nil when it takes none.
        public var argument: String?
        /// What it does, for the help screen.
        public var help: String
        /// Values the argument completes to.
        public var choices: [String] = []
    }

    /// Every command, in help order. ``KeymapTests`` check each ``Command`` has one entry.
    public static let entries: [Entry] = [
        Entry(command: .filterPrompt, alias: "filter", argument: "[EXPRESSION]", help: "Set the filter expression (none: open the filter prompt)"),
        Entry(command: .search, alias: "search", argument: "[TEXT]", help: "Set the free-text filter (none: open the prompt)"),
        Entry(command: .clearFilter, alias: "clear", argument: nil, help: "Clear all filters"),
        Entry(command: .errorsOnly, alias: nil, argument: nil, help: "Quick filter: failed flows only"),
        Entry(command: .httpErrorsOnly, alias: nil, argument: nil, help: "Quick filter: 4xx and 5xx only"),
        Entry(command: .cycleMethod, alias: nil, argument: nil, help: "Quick filter: cycle method"),
        Entry(command: .markedOnly, alias: "marked", argument: nil, help: "Quick filter: marked flows only"),
        Entry(command: .sortBy, alias: "sort", argument: "KEY", help: "Sort by time, duration, size, status or host",
              choices: SortKey.allCases.map(\.rawValue)),
        Entry(command: .cycleSort, alias: nil, argument: nil, help: "Cycle the sort order"),
        Entry(command: .reverseSort, alias: "reverse", argument: nil, help: "Reverse the sort order"),
        Entry(command: .chooseColumns, alias: "columns", argument: "[NAME,…]", help: "Choose the list's columns (none: the default set)",
              choices: ListColumn.allCases.map(\.rawValue)),
        Entry(command: .toggleMark, alias: "mark", argument: nil, help: "Mark or unmark the selected flow"),
        Entry(command: .editComment, alias: "comment", argument: "[TEXT]", help: "Set the selected flow's comment (none: edit it)"),
        Entry(command: .nextMark, alias: nil, argument: nil, help: "Jump to the next marked flow"),
        Entry(command: .previousMark, alias: nil, argument: nil, help: "Jump to the previous marked flow"),
        Entry(command: .clearMarks, alias: "unmark", argument: nil, help: "Unmark every flow"),
        Entry(command: .setDiffBase, alias: "base", argument: nil, help: "Make the selected flow the base of a diff"),
        Entry(command: .openDiff, alias: "diff", argument: nil, help: "Diff the base flow with the selected one"),
        Entry(command: .exportHAR, alias: "export", argument: "[FILE]", help: "Write the shown flows to a HAR file"),
        Entry(command: .saveFlows, alias: "save", argument: "[FILE]", help: "Write the shown flows, marks and comments as JSON lines (--read opens it)"),
        Entry(command: .copyCurl, alias: "curl", argument: nil, help: "Copy the selected flow as a curl command"),
        Entry(command: .copySwift, alias: "swift", argument: nil, help: "Copy the selected flow as Swift URLRequest code"),
        Entry(command: .copyHTTPie, alias: "httpie", argument: nil, help: "Copy the selected flow as an HTTPie command"),
        Entry(command: .replay, alias: "replay", argument: nil, help: "Send the selected request again through the app's agent"),
        Entry(command: .intercept, alias: "intercept", argument: "[FILTER]",
              help: "Hold the flows that match FILTER at a breakpoint (~q requests only, ~s responses only); without FILTER, asks"),
        Entry(command: .resume, alias: "resume", argument: nil, help: "Resume the selected held flow"),
        Entry(command: .resumeAll, alias: nil, argument: nil, help: "Resume every held flow"),
        Entry(command: .kill, alias: "kill", argument: nil, help: "Kill the selected held flow: the app gets a cancellation"),
        Entry(command: .edit, alias: "edit", argument: nil, help: "Edit the held flow in $EDITOR (saving resumes it), or edit then replay"),
        Entry(command: .openRules, alias: "rules", argument: nil, help: "Open the traffic rules view"),
        Entry(command: .addRule, alias: "rule", argument: "[KIND SPEC]", help: "Add a traffic rule, e.g. map-remote |api.example.com|127.0.0.1:8080 (none: type it)",
              choices: TrafficRule.Kind.allCases.map(\.rawValue)),
        Entry(command: .editRule, alias: nil, argument: nil, help: "Edit the selected rule (rules view)"),
        Entry(command: .toggleRule, alias: nil, argument: nil, help: "Switch the selected rule on or off (rules view)"),
        Entry(command: .deleteRule, alias: nil, argument: nil, help: "Delete the selected rule, after asking (rules view)"),
        Entry(command: .moveRuleUp, alias: nil, argument: nil, help: "Move the selected rule up (rules view)"),
        Entry(command: .moveRuleDown, alias: nil, argument: nil, help: "Move the selected rule down (rules view)"),
        Entry(command: .saveRules, alias: nil, argument: "[FILE]", help: "Save the rules to FILE (none: the --rules file) and keep saving there after each change"),
        Entry(command: .open, alias: "open", argument: nil, help: "Open the selected flow"),
        Entry(command: .back, alias: "back", argument: nil, help: "Back"),
        Entry(command: .togglePause, alias: "pause", argument: nil, help: "Pause or resume the list"),
        Entry(command: .toggleFollow, alias: "follow", argument: nil, help: "Toggle follow"),
        Entry(command: .clearFlows, alias: nil, argument: nil, help: "Clear all flows (asks first)"),
        Entry(command: .showEvents, alias: "events", argument: nil, help: "Show the event log"),
        Entry(command: .toggleHelp, alias: "help", argument: nil, help: "Show or hide the help"),
        Entry(command: .quit, alias: "quit", argument: nil, help: "Quit"),
        Entry(command: .askToQuit, alias: nil, argument: nil, help: "Quit (asks first)"),
        Entry(command: .cursorUp, alias: nil, argument: nil, help: "Move up"),
        Entry(command: .cursorDown, alias: nil, argument: nil, help: "Move down"),
        Entry(command: .cursorTop, alias: "top", argument: nil, help: "Go to the top"),
        Entry(command: .cursorBottom, alias: "bottom", argument: nil, help: "Go to the bottom"),
        Entry(command: .pageUp, alias: nil, argument: nil, help: "Page up"),
        Entry(command: .pageDown, alias: nil, argument: nil, help: "Page down"),
        Entry(command: .nextTab, alias: nil, argument: nil, help: "Next tab (detail)"),
        Entry(command: .previousTab, alias: nil, argument: nil, help: "Previous tab (detail)"),
        Entry(command: .requestTab, alias: "request", argument: nil, help: "Request tab (detail)"),
        Entry(command: .responseTab, alias: "response", argument: nil, help: "Response tab (detail)"),
        Entry(command: .timingTab, alias: "timing", argument: nil, help: "Timing tab (detail)"),
        Entry(command: .searchBody, alias: nil, argument: nil, help: "Search inside the body (detail)"),
        Entry(command: .nextMatch, alias: nil, argument: nil, help: "Next match (detail)"),
        Entry(command: .commandBar, alias: nil, argument: nil, help: "Open the command bar"),
        Entry(command: .confirmYes, alias: nil, argument: nil, help: "Answer yes to a question"),
        Entry(command: .confirmNo, alias: nil, argument: nil, help: "Answer no to a question"),
        Entry(command: .acceptPrompt, alias: nil, argument: nil, help: "Apply what was typed"),
        Entry(command: .cancelPrompt, alias: nil, argument: nil, help: "Cancel typing"),
        Entry(command: .deleteBackward, alias: nil, argument: nil, help: "Delete the last character typed"),
        Entry(command: .clearPrompt, alias: nil, argument: nil, help: "Delete everything typed"),
        Entry(command: .completePrompt, alias: nil, argument: nil, help: "Complete a command name or argument"),
        Entry(command: .historyPrevious, alias: nil, argument: nil, help: "Previous history entry"),
        Entry(command: .historyNext, alias: nil, argument: nil, help: "Next history entry"),
    ]

    /// Commands that only make sense while typing or answering, so the bar refuses them.
    static let notFromTheBar: Set<Command> = [
        .commandBar, .confirmYes, .confirmNo, .acceptPrompt, .cancelPrompt, .deleteBackward, .clearPrompt,
        .completePrompt, .historyPrevious, .historyNext,
    ]

    /// Every name the bar accepts, aliases first, then keymap names, sorted within each group.
    public static let names: [String] = {
        let usable = entries.filter { !notFromTheBar.contains($0.command) }
        return usable.compactMap(\.alias).sorted() + usable.map(\.command.rawValue).sorted()
    }()

    /// The entry of a command.
    public static func entry(for command: Command) -> Entry? {
        entries.first { $0.command == command }
    }

    /// Why a command line could not be run.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, for the notice line.
        public var description: String
    }

    /// Splits a line into a command and its argument (trimmed; nil when none).
    public static func parse(_ line: String) throws(ParseError) -> (command: Command, argument: String?) {
        let trimmed = line.trimmingSpaces()
        let name = String(trimmed.prefix { !$0.isWhitespace })
        let rest = String(trimmed.dropFirst(name.count)).trimmingSpaces()
        guard !name.isEmpty else { throw ParseError(description: "Type a command; Tab completes, :help lists them") }
        guard let entry = entries.first(where: { ($0.alias == name || $0.command.rawValue == name) && !notFromTheBar.contains($0.command) })
        else {
            throw ParseError(description: "Unknown command \"\(name)\"; Tab completes, :help lists them")
        }
        if entry.argument == nil, !rest.isEmpty {
            throw ParseError(description: "\(name) takes no argument")
        }
        if let argument = entry.argument, !argument.hasPrefix("["), rest.isEmpty {
            let hint = entry.choices.isEmpty ? argument : entry.choices.joined(separator: ", ")
            throw ParseError(description: "\(name) needs \(hint)")
        }
        return (entry.command, rest.isEmpty ? nil : rest)
    }

    /// Completes the line: the command name while it is the only word,
    /// else the argument's last comma- or space-separated item from the
    /// command's choices. Completes as far as all candidates agree;
    /// returns the line unchanged when nothing matches.
    public static func complete(_ line: String) -> String {
        guard let space = line.firstIndex(of: " ") else {
            let matches = names.filter { $0.hasPrefix(line) }
            guard let first = matches.first else { return line }
            let common = matches.dropFirst().reduce(first) { commonPrefix($0, $1) }
            return matches.count == 1 ? common + " " : common
        }
        let name = String(line[..<space])
        guard let entry = entries.first(where: { $0.alias == name || $0.command.rawValue == name }), !entry.choices.isEmpty else {
            return line
        }
        let argument = line[line.index(after: space)...]
        let cut = argument.lastIndex { $0 == "," || $0 == " " }.map { argument.index(after: $0) } ?? argument.startIndex
        let partial = String(argument[cut...])
        let matches = entry.choices.filter { $0.hasPrefix(partial) }
        guard let first = matches.first else { return line }
        let common = matches.dropFirst().reduce(first) { commonPrefix($0, $1) }
        return String(line[..<cut]) + common
    }

    /// The candidates for what is typed, for the hint beside the bar.
    public static func candidates(_ line: String) -> [String] {
        guard !line.contains(" ") else { return [] }
        return names.filter { $0.hasPrefix(line) }
    }

    private static func commonPrefix(_ left: String, _ right: String) -> String {
        String(zip(left, right).prefix { $0 == $1 }.map(\.0))
    }
}
