import CNCursesW
import InspectorCore
@testable import InspectorTUI
import XCTest

/// The decoding of what get_wch returns into keymap keys.
final class TerminalKeyTests: XCTestCase {
    func testControlCharactersBecomeNamedKeys() {
        XCTAssertEqual(Terminal.characterKey(9), .tab)
        XCTAssertEqual(Terminal.characterKey(13), .enter)
        XCTAssertEqual(Terminal.characterKey(10), .enter)
        XCTAssertEqual(Terminal.characterKey(27), .escape)
        XCTAssertEqual(Terminal.characterKey(127), .backspace)
        XCTAssertEqual(Terminal.characterKey(3), .control("c"))
        XCTAssertEqual(Terminal.characterKey(21), .control("u"))
    }

    func testPrintableAndWideCharactersAreCharacters() {
        XCTAssertEqual(Terminal.characterKey(UInt32(UInt8(ascii: "j"))), .character("j"))
        XCTAssertEqual(Terminal.characterKey(0x00E9), .character("é"))
        XCTAssertEqual(Terminal.characterKey(0x6771), .character("東"))
    }

    func testFunctionKeys() {
        XCTAssertEqual(Terminal.functionKey(KEY_UP), .up)
        XCTAssertEqual(Terminal.functionKey(KEY_NPAGE), .pageDown)
        XCTAssertEqual(Terminal.functionKey(KEY_BTAB), .backTab)
        XCTAssertNil(Terminal.functionKey(netinspect_key_f(5)))
    }
}
