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

    func testEveryUserCommandHasAKey() {
        let bound = Set(Keymap.standard.bindings.map(\.command))
        for command in Command.allCases {
            XCTAssertTrue(bound.contains(command.rawValue), "\(command.rawValue) has no key")
        }
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

    func testHelpListsEveryCommandOfTheListAndDetail() {
        let help = HelpContent.lines(for: .standard).map(\.text).joined(separator: "\n")
        for binding in Keymap.standard.bindings where binding.context == .list || binding.context == .detail {
            XCTAssertTrue(help.contains(binding.help), "help lacks '\(binding.help)'")
        }
    }
}
