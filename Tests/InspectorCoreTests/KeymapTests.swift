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
        XCTAssertTrue(help.contains { $0.hasPrefix("  m ") && $0.contains(":mark") && $0.contains("Mark or unmark") }, help.joined(separator: "\n"))
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

    /// mitmproxy's console keys (`tools/console/defaultkeys.py`) for every
    /// action netinspect also has, with the contexts mitmproxy binds them in
    /// (its `flowlist` is our list, `flowview` our detail view).
    private static let mitmproxyKeys: [(key: String, contexts: [KeyContext], command: Command)] = [
        (":", [.list, .detail], .commandBar),
        ("?", [.list, .detail], .toggleHelp),
        ("E", [.list, .detail], .showEvents),
        ("Q", [.list, .detail], .quit),
        ("q", [.detail], .back),
        ("P", [.list], .open),
        ("g", [.list, .detail], .cursorTop),
        ("G", [.list, .detail], .cursorBottom),
        ("k", [.list, .detail], .cursorUp),
        ("j", [.list, .detail], .cursorDown),
        ("l", [.detail], .nextTab),
        ("h", [.detail], .previousTab),
        ("tab", [.detail], .nextTab),
        ("enter", [.list], .open),
        ("space", [.list], .pageDown),
        ("C-f", [.list, .detail], .pageDown),
        ("C-b", [.list, .detail], .pageUp),
        ("I", [.list, .detail], .toggleIntercept),
        ("i", [.list, .detail], .intercept),
        ("A", [.list, .detail], .resumeAll),
        ("a", [.list, .detail], .resume),
        ("b", [.list, .detail], .saveBody),
        ("d", [.list, .detail], .deleteFlow),
        ("D", [.list, .detail], .duplicateFlow),
        ("f", [.list], .filterPrompt),
        ("F", [.list], .toggleFollow),
        ("m", [.list], .toggleMark),
        ("M", [.list], .markedOnly),
        ("o", [.list], .cycleSort),
        ("r", [.list, .detail], .replay),
        ("n", [.list], .newFlow),
        ("v", [.list], .reverseSort),
        ("U", [.list], .clearMarks),
        ("w", [.list], .saveFlows),
        ("X", [.list], .kill),
        ("z", [.list], .clearFlows),
        ("e", [.detail], .edit),
        ("space", [.detail], .nextFlow),
        ("m", [.detail], .cycleBodyView),
        ("p", [.detail], .previousFlow),
    ]

    func testEveryMitmproxyKeyForAnActionWeHaveRunsThatAction() {
        for (spec, contexts, command) in Self.mitmproxyKeys {
            let key = Key(spec: spec)!
            for context in contexts {
                XCTAssertEqual(Keymap.standard.command(for: key, in: context), command, "\(spec) in \(context)")
            }
        }
    }

    func testEachCommandIsDefinedOnceAndTheKeymapHelpAndBarComeFromIt() {
        XCTAssertEqual(Set(CommandTable.all.map(\.command)).count, CommandTable.all.count, "a command has two rows")
        XCTAssertEqual(Set(CommandTable.all.map(\.command)), Set(Command.allCases))
        for binding in Keymap.standard.bindings {
            XCTAssertEqual(binding.help, CommandTable.spec(for: Command(rawValue: binding.command)!)?.help, binding.command)
        }
        XCTAssertEqual(CommandBar.entries, CommandTable.all)
    }

    func testAKeysFileRebindsAndUnbinds() throws {
        let keymap = try Keymap.standard.rebinding("""
            # comments and blank lines are fine

            space  mark         list        # an alias
            C-d    flow.delete  list,detail
            !      none         list
            """)
        XCTAssertEqual(keymap.command(for: .character(" "), in: .list), .toggleMark)
        XCTAssertEqual(keymap.command(for: .control("d"), in: .detail), .deleteFlow)
        XCTAssertNil(keymap.command(for: .character("!"), in: .list))
        XCTAssertEqual(keymap.command(for: .character("m"), in: .list), .toggleMark, "other keys stay")
        XCTAssertTrue(HelpContent.lines(for: keymap).map(\.text).contains { $0.hasPrefix("  m, space ") }, "help follows the keys file")
        var state = AppState(keymap: keymap)
        state.press("space")
        XCTAssertEqual(state.keyName(.toggleMark), "m")
        XCTAssertEqual(state.keyName(.errorsOnly), ":filter.errors", "an unbound command is named by its bar name")
    }

    func testAKeysFileWithAMistakeSaysWhichLine() {
        for (text, line, words) in [("j cursor.down\nZZ top", 2, "unknown key 'ZZ'"), ("x frobnicate", 1, "unknown command 'frobnicate'"),
                                    ("x top sideways", 1, "unknown context 'sideways'"), ("x", 1, "expected 'KEY COMMAND")] {
            XCTAssertThrowsError(try Keymap.standard.rebinding(text)) { error in
                let error = error as? Keymap.FileError
                XCTAssertEqual(error?.line, line, text)
                XCTAssertTrue(error?.message.contains(words) == true, "\(String(describing: error))")
            }
        }
    }
}
