import Foundation
import WireProtocol

/// The traffic rules of a UI session, as the rules view (`R`) lists and
/// edits them: every rule with whether it is on, where it came from, and the
/// rules file (`--rules FILE`) it is saved to.
///
/// A rules file holds one rule a line, `KIND SPEC`. A rule that is off is
/// kept in the file as a comment, `# off: KIND SPEC`, so a netinspect
/// that does not know about switched-off rules (and ``RuleLoader/loadFile(at:)``)
/// simply skips it. Other comments and blank lines are kept where they were:
/// each stays above the rule it preceded.
///
/// ```swift
/// var book = try RuleLoader.readBook(at: "rules.txt")
/// book.entries[0].isEnabled = false
/// book.fileText   // "# off: map-remote |api.example.com|127.0.0.1:8080\n"
/// ```
package struct RuleBook: Sendable, Equatable {
    /// What marks a rule that is off in a rules file.
    static let disabledPrefix = "# off: "

    /// One rule of the book.
    package struct Entry: Sendable, Equatable {
        /// Where a rule came from.
        package enum Origin: Sendable, Equatable {
            /// The rules file, or added in the view: saved to the rules file.
            case file
            /// A command-line flag (`--map-remote`…): in force for this
            /// session, never written to the rules file.
            case flag
        }

        /// What the rule does.
        var kind: TrafficRule.Kind
        /// The rule in mitmproxy's syntax, as typed.
        package var spec: String
        /// Where it came from.
        var origin: Origin
        /// The rule as agents get it (map-local files read), while it is on;
        /// nil while it is off.
        var rule: TrafficRule?
        /// Comments and blank lines above the rule in the file, kept as they were.
        var leadingLines: [String] = []

        /// Creates an entry; `rule` nil makes it off.
        init(kind: TrafficRule.Kind, spec: String, origin: Origin = .file, rule: TrafficRule?) {
            self.kind = kind
            self.spec = spec
            self.origin = origin
            self.rule = rule
        }

        /// Creates an entry that is on.
        package init(_ rule: TrafficRule, origin: Origin = .file) {
            self.init(kind: rule.kind, spec: rule.spec, origin: origin, rule: rule)
        }

        /// Whether the rule is in force.
        var isEnabled: Bool { rule != nil }

        /// `KIND SPEC`, as typed in the view and written to the file.
        var text: String { "\(kind.rawValue) \(spec)" }
    }

    /// How the last save went.
    package enum SaveOutcome: Sendable, Equatable {
        /// Written to the file.
        case saved(path: String)
        /// Could not be written, with the reason.
        case failed(path: String, reason: String)
    }

    /// The rules, in the order agents apply them.
    package var entries: [Entry]
    /// The rules file changes are saved to; nil keeps them in memory.
    package var path: String?
    /// Comments and blank lines after the last rule of the file.
    var trailingLines: [String] = []
    /// How the last save went, if there was one.
    var lastSave: SaveOutcome?
    /// Whether the file text starts with a comment saying how to read it:
    /// for a file netinspect creates, not one a person wrote.
    var writesHeader = true

    /// Creates a book.
    package init(entries: [Entry] = [], path: String? = nil) {
        self.entries = entries
        self.path = path
    }

    /// The rules agents that accept control get now: those that are on, in order.
    package var inForce: [TrafficRule] { entries.compactMap(\.rule) }

    /// The directory relative map-local paths are read from: the rules
    /// file's, else nil (the working directory), as for the flags.
    var directory: URL? {
        path.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
    }

    /// The rules file's text: the file's rules (not the flags'), rules that
    /// are off behind ``disabledPrefix``, comments kept where they were. A
    /// file netinspect creates starts with a comment saying how to read it.
    var fileText: String {
        var lines: [String] = []
        let saved = entries.filter { $0.origin == .file }
        if writesHeader {
            lines.append("# netinspect traffic rules: KIND SPEC, one a line; '\(Self.disabledPrefix)' marks a rule that is off")
        }
        for entry in saved {
            lines.append(contentsOf: entry.leadingLines)
            lines.append((entry.isEnabled ? "" : Self.disabledPrefix) + entry.text)
        }
        lines.append(contentsOf: trailingLines)
        return lines.map { $0 + "\n" }.joined()
    }

    /// Removes an entry; its comments go to the rule after it (or the end),
    /// since nothing says they were about the rule removed.
    mutating func remove(at index: Int) {
        let removed = entries.remove(at: index)
        guard !removed.leadingLines.isEmpty else { return }
        if index < entries.count {
            entries[index].leadingLines.insert(contentsOf: removed.leadingLines, at: 0)
        } else {
            trailingLines.insert(contentsOf: removed.leadingLines, at: 0)
        }
    }
}
