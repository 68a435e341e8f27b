import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// Prompts take the keys meant for them and no others: offered text is
/// replaced by typing, a rule added from the bar leaves the person where
/// they were, and a popup passes on the key that closes it.
final class PromptTypingTests: XCTestCase {
    private func state() -> AppState { Fixtures.mixedState(size: Size(width: 120, height: 30)) }

    func testTheLastSearchIsOfferedSelectedAndTypingReplacesIt() {
        var state = state()
        state.press("/")
        state.type("login")
        state.press("enter")
        XCTAssertEqual(state.searchText, "login")
        state.press("/")
        XCTAssertEqual(state.prompt?.text, "login", "the last search is offered")
        XCTAssertEqual(state.prompt?.isSelected, true)
        state.type("missing")
        XCTAssertEqual(state.prompt?.text, "missing", "typing replaces it, not appends to it")
        state.press("enter")
        XCTAssertEqual(state.searchText, "missing")
    }

    func testABackspaceEditsTheOfferedTextInstead() {
        var state = state()
        state.enter("~m GET", after: "f")
        state.press("f", "backspace", "backspace", "backspace")
        state.type("POST")
        XCTAssertEqual(state.prompt?.text, "~m POST")
    }

    func testTheOfferedFilterIsDrawnSelected() {
        var state = state()
        state.enter("~c 404", after: "f")
        state.press("f")
        let screen = Renderer.render(state, size: state.size)
        let row = screen.size.height - 2
        let column = DisplayWidth.of("Filter: ")
        XCTAssertEqual(screen[row, column].style, .selected, screen.text)
    }

    func testARuleAddedFromTheCommandBarLeavesTheListInCharge() {
        var state = state()
        state.press(":")
        state.type("rule modify-headers |~u :8000/|X-Env|staging")
        guard case .loadRule(let request) = state.press("enter") else { return XCTFail("the rule is checked") }
        let rule = TrafficRule(kind: .modifyHeaders, filter: "~u :8000/", pattern: "X-Env", replacement: "staging")
        _ = Reducer.reduce(&state, .ruleLoaded(request, .success(rule)))
        XCTAssertEqual(state.mode, .list, "the rules view opens with R, not with :rule")
        XCTAssertEqual(state.rules.entries.count, 1)
        XCTAssertEqual(state.press("d"), .none)
        XCTAssertNil(state.confirmation, "d deletes the selected flow, it does not ask to delete a rule")
    }

    func testTheKeyThatClosesTheCopiedCommandsPopupStillActs() {
        var state = state()
        guard case .copyToClipboard = state.press("C") else { return XCTFail("C copies") }
        XCTAssertNotNil(state.overlay)
        state.press("W")
        XCTAssertNil(state.overlay)
        XCTAssertEqual(state.prompt?.purpose, .writeFlows(har: true), "W was not swallowed by the popup")
    }

    func testThePopupStillScrollsAndClosesWithItsOwnKeys() {
        var state = state()
        state.press("C")
        state.press("j")
        XCTAssertNotNil(state.overlay, "j scrolls the popup")
        state.press("q")
        XCTAssertNil(state.overlay)
        XCTAssertEqual(state.mode, .list)
    }
}
