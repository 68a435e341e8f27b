import Foundation

extension Keymap {
    /// Why a keys file cannot be used.
    package struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The line (1-based).
        var line: Int
        /// What is wrong there.
        var message: String
        package var description: String { "line \(line): \(message)" }
    }

    /// The keymap with a keys file's rows in force, in the spirit of
    /// mitmproxy's `keys.yaml` but one binding a line, so no YAML parser is
    /// needed: `KEY COMMAND [CONTEXT,…]` binds KEY to COMMAND (its `:` name or
    /// alias) in those contexts (`global` when none is given), replacing what
    /// KEY did there; `KEY none CONTEXT` unbinds it. `#` starts a comment.
    ///
    /// ```swift
    /// let keymap = try Keymap.standard.rebinding("""
    ///     # mark with space, as in some other tools
    ///     space  flow.mark  list
    ///     C-d    delete     list,detail
    ///     """)
    /// ```
    /// - Throws: ``FileError`` naming the first line that is not a binding.
    package func rebinding(_ text: String) throws(FileError) -> Keymap {
        var rows = bindings
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard !words.isEmpty else { continue }
            let number = index + 1
            guard words.count == 2 || words.count == 3 else {
                throw FileError(line: number, message: "expected 'KEY COMMAND [CONTEXT,…]'")
            }
            guard Key(spec: words[0]) != nil else {
                throw FileError(line: number, message: "unknown key '\(words[0])' (a character, C-x, or a name such as enter, esc, tab, space, up, pgdn)")
            }
            let contexts = try Self.contexts(words.count == 3 ? words[2] : "global", line: number)
            let spec = CommandTable.all.first { $0.command.rawValue == words[1] || $0.alias == words[1] }
            guard words[1] == "none" || spec != nil else {
                throw FileError(line: number, message: "unknown command '\(words[1])' (the names of the : bar; none unbinds)")
            }
            rows.removeAll { $0.key == words[0] && contexts.contains($0.context) }
            if let spec {
                rows += contexts.map { KeyBinding(key: words[0], command: spec.command.rawValue, context: $0, help: spec.help) }
            }
        }
        return Keymap(rows)
    }

    private static func contexts(_ text: String, line: Int) throws(FileError) -> [KeyContext] {
        var contexts: [KeyContext] = []
        for name in text.split(separator: ",") {
            guard let context = KeyContext(rawValue: String(name)) else {
                let known = KeyContext.allCases.map(\.rawValue).joined(separator: ", ")
                throw FileError(line: line, message: "unknown context '\(name)' (one of \(known))")
            }
            contexts.append(context)
        }
        return contexts
    }

    /// Where netinspect looks for a keys file when `--keys` is not given:
    /// `$XDG_CONFIG_HOME/netinspect/keys`, else `~/.config/netinspect/keys`.
    package static func defaultFilePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return config + "/netinspect/keys" }
        return environment["HOME"].map { $0 + "/.config/netinspect/keys" }
    }
}
