/// Where a key binding applies.
public enum KeyContext: String, Sendable, CaseIterable {
    /// Everywhere, unless the current context binds the key itself.
    case global
    /// The flow list.
    case list
    /// The detail view of one flow.
    case detail
    /// The traffic rules view (`R`).
    case rules
    /// The help overlay and the event log.
    case help
    /// A yes/no question.
    case confirm
    /// Typing into the prompt line; unbound printable keys are inserted.
    case prompt

    /// Whether `global` bindings also apply here. Text entry and questions
    /// take every key for themselves.
    var inheritsGlobal: Bool { self != .prompt && self != .confirm }
}

/// One row of the keymap.
public struct KeyBinding: Sendable, Equatable {
    /// The key, in ``Key/init(spec:)`` spelling.
    public var key: String
    /// The ``Command`` raw value it runs.
    public var command: String
    /// Where it applies.
    public var context: KeyContext
    /// What it does, for the help overlay.
    public var help: String
}

/// The keymap: one table of (key, command, context, help). Lookups and the
/// help overlay both read it; nothing else binds keys.
public struct Keymap: Sendable {
    /// The rows, in help order.
    public let bindings: [KeyBinding]
    private let table: [KeyContext: [Key: Command]]

    /// Builds a keymap; rows whose key or command does not parse are left
    /// out of lookups (``KeymapTests`` guarantee there are none in ``standard``).
    public init(_ bindings: [KeyBinding]) {
        self.bindings = bindings
        var table: [KeyContext: [Key: Command]] = [:]
        for binding in bindings {
            guard let key = Key(spec: binding.key), let command = Command(rawValue: binding.command) else { continue }
            table[binding.context, default: [:]][key] = table[binding.context]?[key] ?? command
        }
        self.table = table
    }

    /// The command a key runs in a context, falling back to global bindings.
    public func command(for key: Key, in context: KeyContext) -> Command? {
        if let command = table[context]?[key] { return command }
        return context.inheritsGlobal ? table[.global]?[key] : nil
    }

    /// The default keymap.
    public static let standard = Keymap([
        bind("j", "cursor.down", .global, "Move down"),
        bind("down", "cursor.down", .global, "Move down"),
        bind("k", "cursor.up", .global, "Move up"),
        bind("up", "cursor.up", .global, "Move up"),
        bind("g", "cursor.top", .global, "Go to the top"),
        bind("home", "cursor.top", .global, "Go to the top"),
        bind("G", "cursor.bottom", .global, "Go to the bottom"),
        bind("end", "cursor.bottom", .global, "Go to the bottom"),
        bind("pgup", "page.up", .global, "Page up"),
        bind("pgdn", "page.down", .global, "Page down"),
        bind("space", "page.down", .global, "Page down"),
        bind("q", "view.back", .global, "Back to the list; close help"),
        bind("esc", "view.back", .global, "Back"),
        bind("Q", "app.quit", .global, "Quit"),
        bind("C-c", "app.quit", .global, "Quit"),
        bind("?", "help.toggle", .global, "Show or hide this help"),
        bind("E", "events.show", .global, "Show the event log"),
        bind(":", "command.open", .global, "Command bar: run any command by name (Tab completes)"),
        bind("R", "rules.open", .global, "Traffic rules: list, add, switch on or off, delete (saved to --rules FILE)"),

        bind("enter", "flow.open", .list, "Open the selected flow"),
        bind("q", "app.askToQuit", .list, "Quit (asks first)"),
        bind("/", "filter.search", .list, "Search: free-text filter (URL, host, method, status)"),
        bind("f", "filter.prompt", .list, "Filter expression (~m ~c ~d ~u ~h ~b ~t ~e ~p ! & |)"),
        bind("e", "filter.errors", .list, "Quick filter: failed flows only"),
        bind("x", "filter.httpErrors", .list, "Quick filter: 4xx and 5xx only"),
        bind("m", "filter.cycleMethod", .list, "Quick filter: cycle method"),
        bind("c", "filter.clear", .list, "Clear all filters"),
        bind("o", "sort.cycle", .list, "Cycle sort: time, duration, size, status, host"),
        bind("v", "sort.reverse", .list, "Reverse the sort order"),
        bind("p", "list.pause", .list, "Pause or resume the list (events still recorded)"),
        bind("z", "flows.clear", .list, "Clear all flows (asks first)"),
        bind("F", "list.follow", .list, "Toggle follow (keep the newest flow in view)"),
        bind("C", "flow.copyCurl", .list, "Copy the selected flow as a curl command (OSC 52)"),
        bind("w", "flows.exportHAR", .list, "Write the shown flows to a HAR file"),
        bind("M", "flow.mark", .list, "Mark or unmark the selected flow"),
        bind("#", "flow.comment", .list, "Add or edit the selected flow's comment"),
        bind("]", "marks.next", .list, "Jump to the next marked flow"),
        bind("[", "marks.previous", .list, "Jump to the previous marked flow"),
        bind("*", "filter.marked", .list, "Quick filter: marked flows only (~marked)"),
        bind("U", "marks.clear", .list, "Unmark every flow"),
        bind("b", "diff.base", .list, "Make the selected flow the base of a diff"),
        bind("D", "diff.open", .list, "Diff the base flow (b, else the newest mark) with the selected one"),
        bind("S", "flow.copySwift", .list, "Copy the selected flow as Swift URLRequest code (OSC 52)"),
        bind("H", "flow.copyHTTPie", .list, "Copy the selected flow as an HTTPie command (OSC 52)"),
        bind("r", "flow.replay", .list, "Replay: the app's agent sends the selected request again, as a new flow"),
        bind("i", "intercept.set", .list, "Breakpoints: hold the flows that match a filter (~q requests only, ~s responses only)"),
        bind("a", "flow.resume", .list, "Resume the selected held flow"),
        bind("A", "flows.resumeAll", .list, "Resume every held flow"),
        bind("X", "flow.kill", .list, "Kill the selected held flow: the app gets a cancellation"),

        bind("tab", "tab.next", .detail, "Next tab"),
        bind("S-tab", "tab.previous", .detail, "Previous tab"),
        bind("right", "tab.next", .detail, "Next tab"),
        bind("left", "tab.previous", .detail, "Previous tab"),
        bind("1", "tab.request", .detail, "Request tab"),
        bind("2", "tab.response", .detail, "Response tab"),
        bind("3", "tab.timing", .detail, "Timing tab"),
        bind("/", "detail.search", .detail, "Search inside the body"),
        bind("n", "detail.nextMatch", .detail, "Next match"),
        bind("C", "flow.copyCurl", .detail, "Copy this flow as a curl command (OSC 52)"),
        bind("S", "flow.copySwift", .detail, "Copy this flow as Swift URLRequest code (OSC 52)"),
        bind("H", "flow.copyHTTPie", .detail, "Copy this flow as an HTTPie command (OSC 52)"),
        bind("r", "flow.replay", .detail, "Replay this request through the app's agent, as a new flow"),
        bind("e", "flow.edit", .detail, "Edit in $EDITOR: a held flow (saving resumes it with the edit), else edit then replay"),
        bind("i", "intercept.set", .detail, "Breakpoints: hold the flows that match a filter"),
        bind("a", "flow.resume", .detail, "Resume this held flow"),
        bind("A", "flows.resumeAll", .detail, "Resume every held flow"),
        bind("X", "flow.kill", .detail, "Kill this held flow: the app gets a cancellation"),
        bind("M", "flow.mark", .detail, "Mark or unmark this flow"),
        bind("#", "flow.comment", .detail, "Add or edit this flow's comment"),
        bind("b", "diff.base", .detail, "Make this flow the base of a diff"),
        bind("D", "diff.open", .detail, "Diff the base flow with this one"),

        bind("a", "rules.add", .rules, "Add a rule: KIND SPEC, e.g. map-remote |api.example.com|127.0.0.1:8080"),
        bind("enter", "rules.edit", .rules, "Edit the selected rule"),
        bind("space", "rules.toggle", .rules, "Switch the selected rule on or off (off: kept in the file, not sent)"),
        bind("t", "rules.toggle", .rules, "Switch the selected rule on or off (off: kept in the file, not sent)"),
        bind("d", "rules.delete", .rules, "Delete the selected rule (asks first)"),
        bind("K", "rules.moveUp", .rules, "Move the selected rule up (order matters: the first map-local that matches answers)"),
        bind("J", "rules.moveDown", .rules, "Move the selected rule down"),

        bind("y", "confirm.yes", .confirm, "Yes"),
        bind("n", "confirm.no", .confirm, "No"),
        bind("esc", "confirm.no", .confirm, "No"),

        bind("enter", "prompt.accept", .prompt, "Apply"),
        bind("esc", "prompt.cancel", .prompt, "Cancel"),
        bind("backspace", "prompt.deleteBackward", .prompt, "Delete the last character"),
        bind("C-u", "prompt.clear", .prompt, "Delete everything typed"),
        bind("tab", "prompt.complete", .prompt, "Complete a command name or argument (command bar)"),
        bind("up", "prompt.historyPrevious", .prompt, "Previous entry of the history"),
        bind("down", "prompt.historyNext", .prompt, "Next entry of the history"),
    ])

    private static func bind(_ key: String, _ command: String, _ context: KeyContext, _ help: String) -> KeyBinding {
        KeyBinding(key: key, command: command, context: context, help: help)
    }
}
