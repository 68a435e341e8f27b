/// Where a key binding applies.
package enum KeyContext: String, Sendable, CaseIterable {
    /// Everywhere, unless the current context binds the key itself.
    case global
    /// The flow list.
    case list
    /// The detail view of one flow.
    case detail
    /// The traffic rules view (`R`).
    case rules
    /// The insights view (`s`).
    case insights
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
package struct KeyBinding: Sendable, Equatable {
    /// The key, in ``Key/init(spec:)`` spelling.
    var key: String
    /// The ``Command`` raw value it runs.
    var command: String
    /// Where it applies.
    var context: KeyContext
    /// What it does, for the help overlay.
    var help: String
}

/// The keymap: one table of (key, command, context, help), made from
/// ``CommandTable`` and the person's keys file (``Keymap/rebinding(_:)``).
/// Lookups and the help overlay both read it; nothing else binds keys.
package struct Keymap: Sendable {
    /// The rows, in help order.
    let bindings: [KeyBinding]
    private let table: [KeyContext: [Key: Command]]

    /// Builds a keymap; rows whose key or command does not parse are left
    /// out of lookups (``KeymapTests`` guarantee there are none in ``standard``).
    init(_ bindings: [KeyBinding]) {
        self.bindings = bindings
        var table: [KeyContext: [Key: Command]] = [:]
        for binding in bindings {
            guard let key = Key(spec: binding.key), let command = Command(rawValue: binding.command) else { continue }
            table[binding.context, default: [:]][key] = table[binding.context]?[key] ?? command
        }
        self.table = table
    }

    /// The command a key runs in a context, falling back to global bindings.
    func command(for key: Key, in context: KeyContext) -> Command? {
        if let command = table[context]?[key] { return command }
        return context.inheritsGlobal ? table[.global]?[key] : nil
    }

    /// The default keymap, made from ``CommandTable/all``.
    package static let standard = Keymap(CommandTable.all.flatMap { spec in
        spec.keys.flatMap { placement in
            placement.contexts.map { KeyBinding(key: placement.key, command: spec.command.rawValue, context: $0, help: spec.help) }
        }
    })

    /// The first key bound to a command in a context (or globally), for
    /// notices that name a key: "press + on another flow".
    func key(for command: Command, in context: KeyContext) -> String? {
        bindings.first { $0.command == command.rawValue && ($0.context == context || $0.context == .global) }?.key
    }
}
