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
package enum CommandBar {
    /// One command the bar knows: its row of ``CommandTable``.
    package typealias Entry = CommandSpec

    /// Every command, in help order (``CommandTable/all``).
    static var entries: [Entry] { CommandTable.all }

    /// Commands that only make sense while typing or answering, so the bar refuses them.
    static let notFromTheBar: Set<Command> = [
        .commandBar, .confirmYes, .confirmNo, .acceptPrompt, .cancelPrompt, .deleteBackward, .clearPrompt,
        .completePrompt, .historyPrevious, .historyNext,
    ]

    /// Every name the bar accepts, aliases first, then keymap names, sorted within each group.
    static let names: [String] = {
        let usable = entries.filter { !notFromTheBar.contains($0.command) }
        return usable.compactMap(\.alias).sorted() + usable.map(\.command.rawValue).sorted()
    }()

    /// The entry of a command.
    static func entry(for command: Command) -> Entry? {
        entries.first { $0.command == command }
    }

    /// Why a command line could not be run.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, for the notice line.
        package var description: String
    }

    /// Splits a line into a command and its argument (trimmed; nil when none).
    static func parse(_ line: String) throws(ParseError) -> (command: Command, argument: String?) {
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
    static func complete(_ line: String) -> String {
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
    static func candidates(_ line: String) -> [String] {
        guard !line.contains(" ") else { return [] }
        return names.filter { $0.hasPrefix(line) }
    }

    private static func commonPrefix(_ left: String, _ right: String) -> String {
        String(zip(left, right).prefix { $0 == $1 }.map(\.0))
    }
}
