import FlowFilter
import Foundation
@testable import InspectorCore
@testable import InspectorTUI
import XCTest

/// docs/GUIDE.md is the reference of netinspect's keys, commands, filter
/// language and flags. Its key and filter tables are made from
/// ``CommandTable`` and ``FilterExpression/syntaxSummary`` (the same rows the
/// `?` help is made from) and must be exactly what they would make now, so a
/// command added, rebound or reworded fails here until the guide follows;
/// `NETINSPECT_RECORD_SNAPSHOTS=1` rewrites them, as it does the screen
/// snapshots. Its flags table must name every option `netinspect --help`
/// lists, and nothing else.
final class GuideNamesEveryKeyCommandAndFlagTests: XCTestCase {
    private static let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/GUIDE.md")

    /// The help overlay's sections, in its order.
    private static let contexts: [(KeyContext, String)] = [
        (.list, "Flow list"),
        (.detail, "Detail view"),
        (.rules, "Rules view (`R`)"),
        (.insights, "Insights view (`s`)"),
        (.global, "Everywhere"),
        (.prompt, "Typing a search, filter, comment, rule or command"),
        (.confirm, "Questions"),
    ]

    func testTheKeyTablesAreTheCommandTables() throws {
        let bound = Set(Keymap.standard.bindings.map(\.context))
        XCTAssertEqual(bound.subtracting(Self.contexts.map(\.0)), [], "a context with keys that the guide has no table for")
        try assertGeneratedBlock("keys", is: Self.keyTables())
    }

    func testTheFilterTableIsTheFilterLanguagesSummary() throws {
        try assertGeneratedBlock("filters", is: Self.table(["Expression", "Matches"], FilterExpression.syntaxSummary.map { ["`\($0.syntax)`", $0.meaning] }))
    }

    func testTheStatusBarTableIsTheHelpsLegend() throws {
        try assertGeneratedBlock("status", is: Self.table(["In the status bar", "What it says"],
                                                          StatusBarLegend.entries.map { ["`\($0.word)`", $0.meaning] }))
    }

    func testTheFlagsTableNamesEveryOptionAndNothingElse() throws {
        let help = Netinspect.helpMessage(columns: 10_000)
        let options = try XCTUnwrap(help.components(separatedBy: "OPTIONS:").last)
        // An option's line starts with its names; its help comes after a gap.
        let offered = Set(options.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("-") }
            .flatMap { line in Self.longFlags(in: String(line.components(separatedBy: "  ")[0])) })
        XCTAssertTrue(offered.contains("--listen") && offered.contains("--help"), "could not read the options from:\n\(help)")

        let guide = try String(contentsOf: Self.guide, encoding: .utf8)
        let section = try XCTUnwrap(guide.components(separatedBy: "\n## Flags\n").dropFirst().first, "docs/GUIDE.md has no '## Flags' section")
            .components(separatedBy: "\n## ")[0]
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `-") }
        let documented = Set(rows.flatMap { Self.longFlags(in: String($0.split(separator: "|")[0])) })
        XCTAssertEqual(offered.subtracting(documented).sorted(), [], "options `netinspect --help` lists that docs/GUIDE.md's flags table does not")
        XCTAssertEqual(documented.subtracting(offered).sorted(), [], "flags docs/GUIDE.md documents that netinspect does not have")
    }

    // MARK: - What the guide's generated blocks must hold

    /// One table a context: each command's keys there, its names (the `:`
    /// bar's and the keys file's) and its help; then the commands without a key.
    static func keyTables() -> String {
        var text: [String] = []
        for (context, title) in contexts {
            let rows = Keymap.standard.bindings.filter { $0.context == context }
            guard !rows.isEmpty else { continue }
            var commands: [String] = []
            for row in rows where !commands.contains(row.command) { commands.append(row.command) }
            text.append("### \(title)\n")
            text.append(table(["Keys", "Name", "What it does"], commands.map { command in
                let keys = rows.filter { $0.command == command }.map { "`\($0.key)`" }.joined(separator: ", ")
                let spec = CommandTable.spec(for: Command(rawValue: command)!)!
                return [keys, names(of: spec), spec.help]
            }))
        }
        let bound = Set(Keymap.standard.bindings.map(\.command))
        let unbound = CommandTable.all.filter { !bound.contains($0.command.rawValue) }
        text.append("### Commands without a key\n")
        text.append(table(["Name", "Argument", "What it does"], unbound.map { spec in
            [names(of: spec), spec.argument.map { "`\($0)`" + (spec.choices.isEmpty ? "" : ": " + spec.choices.joined(separator: ", ")) } ?? "", spec.help]
        }))
        return text.joined(separator: "\n")
    }

    /// A command's names, its alias first: either runs it from the bar
    /// (`:delete`) and either binds it in a keys file. A command the bar
    /// refuses (typing, answering) has only its name, for keys files.
    private static func names(of spec: CommandSpec) -> String {
        let names = ([spec.alias].compactMap { $0 } + [spec.command.rawValue]).map { "`\($0)`" }.joined(separator: ", ")
        return CommandBar.notFromTheBar.contains(spec.command) ? names + " (keys file only)" : names
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let line = { (cells: [String]) in "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |" }
        return ([line(header), "|" + String(repeating: "---|", count: header.count)] + rows.map(line)).joined(separator: "\n") + "\n"
    }

    private static func longFlags(in text: String) -> [String] {
        text.matches(of: /--[a-z0-9][a-z0-9-]*/).map { String($0.0) }
    }

    // MARK: - Reading and recording a generated block

    private func assertGeneratedBlock(_ name: String, is expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let begin = "<!-- generated: \(name) (GuideNamesEveryKeyCommandAndFlagTests; NETINSPECT_RECORD_SNAPSHOTS=1 rewrites it) -->\n"
        let end = "<!-- end generated: \(name) -->"
        let guide = try String(contentsOf: Self.guide, encoding: .utf8)
        guard let start = guide.range(of: begin), let stop = guide.range(of: end, range: start.upperBound ..< guide.endIndex) else {
            return XCTFail("docs/GUIDE.md lacks the block \(begin)…\(end)", file: file, line: line)
        }
        let found = String(guide[start.upperBound ..< stop.lowerBound])
        if ProcessInfo.processInfo.environment["NETINSPECT_RECORD_SNAPSHOTS"] != nil, found != expected {
            try guide.replacingCharacters(in: start.upperBound ..< stop.lowerBound, with: expected).write(to: Self.guide, atomically: true, encoding: .utf8)
            return
        }
        guard found != expected else { return }
        let foundLines = found.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let first = zip(foundLines, expectedLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(foundLines.count, expectedLines.count)
        XCTFail("""
            docs/GUIDE.md's \(name) block differs from what the code defines (NETINSPECT_RECORD_SNAPSHOTS=1 rewrites it), first at its line \(first + 1):
            guide: \(first < foundLines.count ? String(foundLines[first]) : "(nothing)")
            code:  \(first < expectedLines.count ? String(expectedLines[first]) : "(nothing)")
            """, file: file, line: line)
    }
}
