/// A key press, as the terminal layer decodes it.
package enum Key: Hashable, Sendable, CustomStringConvertible {
    /// A printable character (including space).
    case character(Character)
    /// A character typed with Control held: `.control("c")` is Ctrl-C.
    case control(Character)
    /// Cursor and paging keys.
    case up, down, left, right, pageUp, pageDown, home, end
    /// Editing and control keys; `backTab` is Shift-Tab.
    case enter, escape, tab, backTab, backspace, delete

    private static let names: [(String, Key)] = [
        ("up", .up), ("down", .down), ("left", .left), ("right", .right),
        ("pgup", .pageUp), ("pgdn", .pageDown), ("home", .home), ("end", .end),
        ("enter", .enter), ("esc", .escape), ("tab", .tab), ("S-tab", .backTab),
        ("backspace", .backspace), ("delete", .delete), ("space", .character(" ")),
    ]

    /// Parses the spelling used in the keymap: a single character (`j`,
    /// `?`), a name (`up`, `pgdn`, `enter`, `esc`, `tab`, `S-tab`, `space`…)
    /// or `C-x` for Control-x. Nil when it is none of these.
    init?(spec: String) {
        if let named = Self.names.first(where: { $0.0 == spec }) {
            self = named.1
        } else if spec.count == 3, spec.hasPrefix("C-"), let letter = spec.last {
            self = .control(letter)
        } else if spec.count == 1, let character = spec.first, character != " " {
            self = .character(character)
        } else {
            return nil
        }
    }

    /// The keymap spelling of the key.
    package var description: String {
        if let named = Self.names.first(where: { $0.1 == self }) { return named.0 }
        switch self {
        case .character(let character): return String(character)
        case .control(let character): return "C-\(character)"
        default: return "?"
        }
    }
}
