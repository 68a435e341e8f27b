import WireProtocol

/// Where a command's default key is bound.
///
/// ```swift
/// KeyPlacement(key: "d", contexts: [.list, .detail])
/// ```
package struct KeyPlacement: Sendable, Equatable {
    /// The key, in ``Key/init(spec:)`` spelling.
    var key: String
    /// The contexts it applies in.
    var contexts: [KeyContext]
}

/// One command, defined once: its name (``Command``), its short name in the
/// `:` bar, its argument, its help and its default keys. The keymap, the
/// help overlay, the bar's parsing and completion are all made from these rows.
///
/// ```swift
/// let spec = CommandTable.spec(for: .deleteFlow)!
/// spec.alias   // "delete": `:delete` in the bar
/// spec.keys    // [KeyPlacement(key: "d", contexts: [.list, .detail])]
/// ```
package struct CommandSpec: Sendable, Equatable {
    /// The command.
    var command: Command
    /// The short name typed in the bar, when it has one.
    var alias: String?
    /// How the argument is written, e.g. `EXPRESSION` or `[FILE]`; nil when it takes none.
    var argument: String?
    /// What it does, for the help overlay and the bar.
    var help: String
    /// Values the argument completes to.
    var choices: [String] = []
    /// Its default keys.
    var keys: [KeyPlacement] = []
}

/// Every command, in help order. Keys follow mitmproxy's console wherever it
/// has the same action (`m` marks, `M` shows marked only, `d` deletes, `D`
/// duplicates, `b` saves a body, `e` edits, `r` replays, `n` makes a new request, `i`/`I` intercept);
/// netinspect's own actions take keys mitmproxy leaves free (`T`, `-` and
/// `_` nest and collapse inbound flows' calls: mitmproxy has no such view).
///
/// ```swift
/// CommandTable.all.count == Command.allCases.count   // one row each
/// ```
package enum CommandTable {
    private static let list: [KeyContext] = [.list]
    private static let detail: [KeyContext] = [.detail]
    private static let flows: [KeyContext] = [.list, .detail]
    private static let global: [KeyContext] = [.global]

    private static func row(_ command: Command, _ alias: String? = nil, _ argument: String? = nil, help: String,
                            choices: [String] = [], keys: [(String, [KeyContext])] = []) -> CommandSpec {
        CommandSpec(command: command, alias: alias, argument: argument, help: help, choices: choices,
                    keys: keys.map { KeyPlacement(key: $0.0, contexts: $0.1) })
    }

    /// The rows.
    static let all: [CommandSpec] = [
        row(.open, "open", help: "Open the selected flow", keys: [("enter", list), ("P", list)]),
        row(.askToQuit, help: "Quit (asks first)", keys: [("q", list)]),
        row(.search, "search", "[TEXT]", help: "Search: free-text filter on URL (as shown, decoded), method, status", keys: [("/", list)]),
        row(.filterPrompt, "filter", "[EXPRESSION]", help: "Filter expression, in mitmproxy's language (summed up at the end of this help)", keys: [("f", list)]),
        row(.errorsOnly, help: "Quick filter: failed flows only", keys: [("!", list)]),
        row(.httpErrorsOnly, help: "Quick filter: 4xx and 5xx only", keys: [("x", list)]),
        row(.cycleMethod, help: "Quick filter: cycle method", keys: [("t", list)]),
        row(.markedOnly, "marked", help: "Show marked flows only, or all again (~marked)", keys: [("M", list)]),
        row(.clearFilter, "clear", help: "Clear all filters", keys: [("c", list)]),
        row(.cycleSort, help: "Cycle sort: time, duration, size, status, host", keys: [("o", list)]),
        row(.sortBy, "sort", "KEY", help: "Sort by time, duration, size, status or host", choices: SortKey.allCases.map(\.rawValue)),
        row(.reverseSort, "reverse", help: "Reverse the sort order", keys: [("v", list)]),
        row(.chooseColumns, "columns", "[NAME,…]", help: "Choose the list's columns (none: the default set)",
            choices: ListColumn.allCases.map(\.rawValue)),
        row(.toggleTree, "tree", help: "Nest the list like a trace: each inbound flow's calls under it (or flat again)", keys: [("T", list)]),
        row(.toggleCollapse, "collapse", help: "Collapse or expand the calls of the selected inbound flow (nested list; the detail's waterfall)",
            keys: [("-", flows)]),
        row(.toggleCollapseAll, "collapseall", help: "Collapse or expand the calls of every inbound flow (nested list)", keys: [("_", list)]),
        row(.togglePause, "pause", help: "Pause or resume the list (events still recorded)", keys: [("p", list)]),
        row(.toggleFollow, "follow", help: "Toggle follow (keep the newest flow in view)", keys: [("F", list)]),
        row(.clearFlows, help: "Clear all flows (asks first)", keys: [("z", list)]),
        row(.deleteFlow, "delete", "[@FLOWS]", help: "Delete the flow from the list",
            choices: FlowSelection.names, keys: [("d", flows)]),
        row(.duplicateFlow, "duplicate", help: "Duplicate the flow (the copy can be edited and sent by netinspect)", keys: [("D", flows)]),
        row(.toggleMark, "mark", "[@FLOWS]", help: "Mark or unmark the flow",
            choices: FlowSelection.names, keys: [("m", list)]),
        row(.cycleBodyView, help: "Cycle the body view (auto, raw, hex, json, form, markup), kept for the content type", keys: [("m", detail)]),
        row(.setBodyView, "view", "MODE", help: "Show bodies of the shown tab's content type as MODE",
            choices: BodyFormatter.View.allCases.map(\.rawValue)),
        row(.editComment, "comment", "[TEXT]", help: "Add or edit the flow's comment", keys: [("#", flows)]),
        row(.nextMark, help: "Jump to the next marked flow", keys: [("]", list)]),
        row(.previousMark, help: "Jump to the previous marked flow", keys: [("[", list)]),
        row(.clearMarks, "unmark", help: "Unmark every flow", keys: [("U", list)]),
        row(.setDiffBase, "base", help: "Make the flow the base of a diff", keys: [("=", flows)]),
        row(.openDiff, "diff", help: "Diff the base flow (else the newest mark) with this one", keys: [("+", flows)]),
        row(.saveFlows, "save", "[FILE]", help: "Write the shown flows, marks and comments as JSON lines to a file you name (--read opens it)", keys: [("w", list)]),
        row(.exportHAR, "export", "[FILE]", help: "Write the shown flows to a HAR file you name", keys: [("W", list)]),
        row(.saveBody, "savebody", "[FILE]", help: "Save the body to a file: the response's, or the request's on the Request tab", keys: [("b", flows)]),
        row(.copyCurl, "curl", help: "Copy the flow as a curl command (OSC 52)", keys: [("C", flows)]),
        row(.copySwift, "swift", help: "Copy the flow as Swift URLRequest code (OSC 52)", keys: [("S", flows)]),
        row(.copyHTTPie, "httpie", help: "Copy the flow as an HTTPie command (OSC 52)", keys: [("H", flows)]),
        row(.replay, "replay", "[@FLOWS]", help: "Replay: the app's agent sends the request again, else netinspect sends it itself",
            choices: FlowSelection.names, keys: [("r", flows)]),
        row(.replayClient, nil, "FILTER [COUNT] [CONCURRENCY]",
            help: "Replay every flow matching FILTER (or @marked, @shown, @all) COUNT times (1), at most CONCURRENCY at once (1)"),
        row(.newFlow, "new", "[curl …]", help: "New request in $EDITOR (a template, or the selected flow's request); saving sends it. new curl … sends a pasted curl command",
            keys: [("n", list)]),
        row(.edit, "edit", help: "Edit in $EDITOR: a held flow (saving resumes it), else edit then replay", keys: [("e", detail)]),
        row(.intercept, "intercept", "[FILTER]", help: "Breakpoints: hold the flows that match FILTER (~q requests only, ~s responses only)", keys: [("i", flows)]),
        row(.toggleIntercept, help: "Switch breakpoints off, or back on with the last filter", keys: [("I", flows)]),
        row(.nextHeld, "held", help: "Go to the next flow held at a breakpoint", keys: [("h", list)]),
        row(.resume, "resume", "[@FLOWS]", help: "Resume the held flow",
            choices: FlowSelection.names, keys: [("a", flows)]),
        row(.resumeAll, help: "Resume every held flow", keys: [("A", flows)]),
        row(.kill, "kill", "[@FLOWS]", help: "Kill the held flow: the app gets a cancellation",
            choices: FlowSelection.names, keys: [("X", flows)]),
        row(.startServerReplay, "replay.server", "FILE…", help: "Server replay: answer the apps' matching requests from recorded flows (HAR or JSON lines), with no network"),
        row(.stopServerReplay, "replay.server.stop", help: "Stop the server replay: requests go to the network again"),
        row(.nextTab, help: "Next tab", keys: [("tab", detail), ("right", detail), ("l", detail)]),
        row(.previousTab, help: "Previous tab", keys: [("S-tab", detail), ("left", detail), ("h", detail)]),
        row(.requestTab, "request", help: "Request tab", keys: [("1", detail)]),
        row(.responseTab, "response", help: "Response tab", keys: [("2", detail)]),
        row(.timingTab, "timing", help: "Timing tab", keys: [("3", detail)]),
        row(.grpcTab, "grpc", help: "gRPC tab of a gRPC call: its messages decoded, status and trailers", keys: [("4", detail)]),
        row(.messagesTab, "messages", help: "Messages tab of a stream: its server-sent events, WebSocket or gRPC messages, decoded, followed while live",
            keys: [("5", detail)]),
        row(.nextFlow, help: "Show the next flow of the list", keys: [("space", detail)]),
        row(.previousFlow, help: "Show the previous flow of the list", keys: [("p", detail)]),
        row(.searchBody, help: "Search inside the body", keys: [("/", detail)]),
        row(.nextMatch, help: "Next match", keys: [("n", detail)]),
        row(.cursorDown, help: "Move down", keys: [("j", global), ("down", global)]),
        row(.cursorUp, help: "Move up", keys: [("k", global), ("up", global)]),
        row(.cursorTop, "top", help: "Go to the top", keys: [("g", global), ("home", global)]),
        row(.cursorBottom, "bottom", help: "Go to the bottom", keys: [("G", global), ("end", global)]),
        row(.pageUp, help: "Page up", keys: [("pgup", global), ("C-b", global)]),
        row(.pageDown, help: "Page down", keys: [("pgdn", global), ("space", global), ("C-f", global)]),
        row(.back, "back", help: "Back to the list; close help", keys: [("q", global), ("esc", global)]),
        row(.quit, "quit", help: "Quit", keys: [("Q", global), ("C-c", global)]),
        row(.toggleHelp, "help", help: "Show or hide this help", keys: [("?", global)]),
        row(.showEvents, "events", help: "Show the event log", keys: [("E", global)]),
        row(.showOutput, "output", help: "Show the output of the command netinspect runs (netinspect -- COMMAND)", keys: [("O", global)]),
        row(.openInsights, "insights", help: "Insights: the traffic by route, host and service, with error rates and percentiles", keys: [("s", global)]),
        row(.insightsFilter, help: "Show the selected group's flows in the list (sets the filter)", keys: [("enter", [.insights])]),
        row(.insightsDimension, help: "Group by route, host or service, in turn; then, with --baseline, the changes against it", keys: [("tab", [.insights])]),
        row(.insightsSort, help: "Cycle sort: impact, count, errors, p50, p95, p99, sent, received, name", keys: [("o", [.insights])]),
        row(.insightsReverse, help: "Reverse the sort order", keys: [("v", [.insights])]),
        row(.commandBar, help: "Command bar: run any command by name (Tab completes)", keys: [(":", global)]),
        row(.openRules, "rules", help: "Traffic rules: list, add, switch on or off, delete (saved to --rules FILE)", keys: [("R", global)]),
        row(.addRule, "rule", "[KIND SPEC]", help: "Add a rule, e.g. map-remote |api.example.com|127.0.0.1:8080 (none: type it)",
            choices: TrafficRule.Kind.allCases.map(\.rawValue), keys: [("a", [.rules])]),
        row(.editRule, help: "Edit the selected rule", keys: [("enter", [.rules])]),
        row(.toggleRule, help: "Switch the selected rule on or off (off: kept in the file, not sent)", keys: [("space", [.rules]), ("t", [.rules])]),
        row(.deleteRule, help: "Delete the selected rule (asks first)", keys: [("d", [.rules])]),
        row(.moveRuleUp, help: "Move the selected rule up (order matters: the first map-local that matches answers)", keys: [("K", [.rules])]),
        row(.moveRuleDown, help: "Move the selected rule down", keys: [("J", [.rules])]),
        row(.saveRules, nil, "[FILE]", help: "Save the rules to FILE (none: the --rules file) and keep saving there after each change"),
        row(.confirmYes, help: "Yes", keys: [("y", [.confirm])]),
        row(.confirmNo, help: "No", keys: [("n", [.confirm]), ("esc", [.confirm])]),
        row(.acceptPrompt, help: "Apply", keys: [("enter", [.prompt])]),
        row(.cancelPrompt, help: "Cancel", keys: [("esc", [.prompt])]),
        row(.deleteBackward, help: "Delete the last character", keys: [("backspace", [.prompt])]),
        row(.clearPrompt, help: "Delete everything typed", keys: [("C-u", [.prompt])]),
        row(.completePrompt, help: "Complete a command name or argument (command bar)", keys: [("tab", [.prompt])]),
        row(.historyPrevious, help: "Previous entry of the history", keys: [("up", [.prompt])]),
        row(.historyNext, help: "Next entry of the history", keys: [("down", [.prompt])]),
    ]

    /// The row of a command.
    static func spec(for command: Command) -> CommandSpec? {
        all.first { $0.command == command }
    }
}
