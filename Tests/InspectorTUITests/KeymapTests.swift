@testable import InspectorCore
import XCTest

final class KeymapTests: XCTestCase {
    func testEveryBindingNamesARealKeyAndCommand() {
        for binding in Keymap.standard.bindings {
            XCTAssertNotNil(Key(spec: binding.key), "unknown key '\(binding.key)'")
            XCTAssertNotNil(Command(rawValue: binding.command), "unknown command '\(binding.command)'")
            XCTAssertFalse(binding.help.isEmpty, "\(binding.key) has no help")
        }
    }

    func testNoKeyIsBoundTwiceInAContext() {
        var seen: Set<String> = []
        for binding in Keymap.standard.bindings {
            let entry = "\(binding.context.rawValue) \(binding.key)"
            XCTAssertTrue(seen.insert(entry).inserted, "\(entry) is bound twice")
        }
    }

    /// Every command has help and a name in the `:` bar; those without a
    /// key are listed in the help screen under their bar name.
    func testEveryCommandHasHelpAndIsReachable() {
        let bound = Set(Keymap.standard.bindings.map(\.command))
        let help = HelpContent.lines(for: .standard).map(\.text).joined(separator: "\n")
        for command in Command.allCases {
            let entries = CommandBar.entries.filter { $0.command == command }
            XCTAssertEqual(entries.count, 1, "\(command.rawValue) needs exactly one command-bar entry")
            XCTAssertFalse(entries.first?.help.isEmpty ?? true, "\(command.rawValue) has no help")
            if !bound.contains(command.rawValue) {
                XCTAssertFalse(CommandBar.notFromTheBar.contains(command), "\(command.rawValue) has neither a key nor a bar name")
                let name = ":" + (entries.first?.alias ?? command.rawValue)
                XCTAssertTrue(help.contains(name), "help lacks \(name)")
            }
        }
    }

    func testCommandBarNamesAreUnique() {
        XCTAssertEqual(Set(CommandBar.names).count, CommandBar.names.count, "an alias is also another command's name")
    }

    func testHelpShowsTheBarNameBesideTheKey() {
        let help = HelpContent.lines(for: .standard).map(\.text)
        XCTAssertTrue(help.contains { $0.contains("M ") && $0.contains(":mark") && $0.contains("Mark or unmark") }, help.joined(separator: "\n"))
        XCTAssertTrue(help.contains { $0.contains(":sort KEY") }, "sort has no key and must be listed with its argument")
    }

    func testContextBindingsOverrideGlobalOnes() {
        let keymap = Keymap.standard
        XCTAssertEqual(keymap.command(for: .character("/"), in: .list), .search)
        XCTAssertEqual(keymap.command(for: .character("/"), in: .detail), .searchBody)
        XCTAssertEqual(keymap.command(for: .character("j"), in: .detail), .cursorDown)
        XCTAssertNil(keymap.command(for: .character("j"), in: .prompt), "typing must not move the cursor")
    }

    func testKeySpellingsRoundTrip() {
        for spec in ["j", "?", "space", "S-tab", "pgdn", "C-c", "esc", "enter"] {
            XCTAssertEqual(Key(spec: spec)?.description, spec)
        }
        XCTAssertNil(Key(spec: "jj"))
    }

    func testHelpListsEveryCommandOfTheListDetailAndRulesView() {
        let help = HelpContent.lines(for: .standard).map(\.text).joined(separator: "\n")
        XCTAssertTrue(help.contains("Rules view (R)"), help)
        for binding in Keymap.standard.bindings where [.list, .detail, .rules].contains(binding.context) {
            XCTAssertTrue(help.contains(binding.help), "help lacks '\(binding.help)'")
        }
    }
}
