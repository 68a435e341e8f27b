import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

final class ReducerTests: XCTestCase {
    func testFollowKeepsTheNewestFlowSelected() {
        var state = Fixtures.mixedState()
        XCTAssertEqual(state.selection, 5)
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(7)))], at: Fixtures.epoch))
        XCTAssertEqual(state.selection, 6)
    }

    func testMovingUpStopsFollowing() {
        var state = Fixtures.mixedState()
        state.press("k")
        XCTAssertFalse(state.follows)
        XCTAssertEqual(state.selection, 4)
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(7)))], at: Fixtures.epoch))
        XCTAssertEqual(state.selection, 4, "the selection stays on its flow")
        state.press("F")
        XCTAssertEqual(state.selection, 6)
    }

    func testEnterOpensTheSelectedFlowAndTabsCycle() {
        var state = Fixtures.mixedState()
        state.press("g", "enter")
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 0)))
        state.press("tab")
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 0, tab: .response)))
        state.press("S-tab", "S-tab")
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 0, tab: .timing)))
        state.press("1")
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 0, tab: .request)))
        state.press("q")
        XCTAssertEqual(state.mode, .list)
    }

    func testShiftQQuitsAtOnceAndQAsksFirst() {
        var state = Fixtures.mixedState()
        XCTAssertEqual(state.press("q"), .none)
        XCTAssertEqual(state.confirmation, .quit)
        XCTAssertEqual(state.press("n"), .none)
        XCTAssertNil(state.confirmation)
        XCTAssertEqual(state.press("q", "y"), .quit)
        XCTAssertEqual(state.press("Q"), .quit)
    }

    func testFilterExpressionNarrowsTheList() {
        var state = Fixtures.mixedState()
        state.enter("~c 5xx", after: "f")
        XCTAssertEqual(state.rows, [2])
        XCTAssertEqual(state.filterDescription, "~c 5xx")
    }

    func testInvalidFilterKeepsThePreviousOneAndSaysWhere() {
        var state = Fixtures.mixedState()
        state.enter("~c 5xx", after: "f")
        state.enter("~c 4xx & (", after: "f")
        XCTAssertEqual(state.filterText, "~c 5xx")
        XCTAssertEqual(state.rows, [2])
        XCTAssertEqual(state.notice?.isError, true)
        XCTAssertTrue(state.notice?.text.contains("column") ?? false, state.notice?.text ?? "")
    }

    func testFreeTextSearchFiltersTheList() {
        var state = Fixtures.mixedState()
        state.enter("auth.example", after: "/")
        XCTAssertEqual(state.rows, [2])
        state.press("c")
        XCTAssertEqual(state.rows.count, 6)
    }

    func testQuickFilters() {
        var state = Fixtures.mixedState()
        state.press("!")
        XCTAssertEqual(state.rows, [3])
        state.press("x")
        XCTAssertEqual(state.rows, [1, 2])
        state.press("t")
        XCTAssertEqual(state.filterText, "~m GET")
        state.press("t")
        XCTAssertEqual(state.filterText, "~m POST")
        XCTAssertEqual(state.rows, [2])
        state.press("c")
        XCTAssertNil(state.filterText)
    }

    func testSortCyclesAndReverses() {
        var state = Fixtures.mixedState()
        state.press("o")
        XCTAssertEqual(state.view.sortKey, .duration)
        XCTAssertEqual(state.rows, [1, 0, 4, 2, 3, 5])
        state.press("v")
        XCTAssertEqual(state.rows, [5, 3, 2, 4, 0, 1])
    }

    func testPauseFreezesTheListButKeepsRecording() {
        var state = Fixtures.mixedState()
        state.press("p")
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(7)))], at: Fixtures.epoch))
        XCTAssertEqual(state.rows.count, 6)
        XCTAssertEqual(state.session.store.count, 7)
        XCTAssertTrue(Renderer.render(state, size: .minimum).text.contains("PAUSED (+1)"))
        state.press("p")
        XCTAssertEqual(state.rows.count, 7)
    }

    func testClearingAsksFirst() {
        var state = Fixtures.mixedState()
        state.press("z", "n")
        XCTAssertEqual(state.session.store.count, 6)
        state.press("z", "y")
        XCTAssertEqual(state.session.store.count, 0)
        XCTAssertEqual(state.rows, [])
    }

    func testBodySearchScrollsToTheMatch() {
        var state = Fixtures.mixedState(size: Size(width: 80, height: 12))
        state.press("g", "enter", "2", "/")
        state.type("price")
        state.press("enter")
        guard case .detail(let detail) = state.mode else { return XCTFail("not in detail") }
        XCTAssertEqual(detail.search, "price")
        let visible = state.detailLines(detail).dropFirst(detail.scroll).prefix(state.pageHeight)
        XCTAssertTrue(visible.contains { $0.text.contains("price") })
        XCTAssertGreaterThan(detail.scroll, 0)
    }

    func testDetailViewShowsUpdatesToItsFlow() {
        var state = Fixtures.mixedState()
        state.press("enter", "2")
        XCTAssertTrue(Renderer.render(state, size: .minimum).text.contains("Waiting for the response"))
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowFinished(Fixtures.finished(6, status: 204, body: "")))], at: Fixtures.epoch))
        XCTAssertTrue(Renderer.render(state, size: .minimum).text.contains("HTTP 204 No Content"))
    }

    func testHelpTogglesAndScrolls() {
        var state = Fixtures.mixedState()
        state.press("?")
        XCTAssertTrue(state.showsHelp)
        state.press("j")
        XCTAssertEqual(state.helpScroll, 1)
        XCTAssertEqual(state.selection, 5, "keys in help do not move the list")
        state.press("esc")
        XCTAssertFalse(state.showsHelp)
    }

    func testPagingMovesByAScreen() {
        var state = AppState(size: .minimum, timeZone: Fixtures.utc)
        let messages = (0..<100).map { Message.flowStarted(Fixtures.started($0)) }
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        state.press("g", "space")
        XCTAssertEqual(state.cursor, 21)
        XCTAssertEqual(state.listTop, 1)
        state.press("G")
        XCTAssertEqual(state.cursor, 99)
        XCTAssertEqual(state.listTop, 79)
    }
}

/// `r` asks the flow's agent to replay it where that can work, else says
/// why and has netinspect send it itself.
final class ReplayKeyTests: XCTestCase {
    private func state(acceptsControl: Bool) -> AppState {
        var state = AppState(timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = acceptsControl
        _ = Reducer.reduce(&state, .inbox([.connected(ConnectionID(7), hello, peer: "unix"), .message(ConnectionID(7), .flowStarted(Fixtures.started(1)))],
                                          at: Fixtures.epoch))
        return state
    }

    func testReplayAsksTheFlowsAgent() {
        var state = state(acceptsControl: true)
        XCTAssertEqual(state.press("r"), .control(.replay(Fixtures.id(1)), to: ConnectionID(7)))
        state.press("enter")
        XCTAssertEqual(state.press("r"), .control(.replay(Fixtures.id(1)), to: ConnectionID(7)), "from the detail view too")
    }

    func testAnAppThatDoesNotAllowControlIsNotAsked() {
        var state = state(acceptsControl: false)
        guard case .send = state.press("r") else { return XCTFail("netinspect sends it") }
        XCTAssertTrue(state.notice?.text.contains("NETINSPECT_CONTROL=1") == true, "\(String(describing: state.notice))")
    }

    func testAGoneAppIsNotAsked() {
        var state = state(acceptsControl: true)
        _ = Reducer.reduce(&state, .inbox([.disconnected(ConnectionID(7), reason: nil)], at: Fixtures.epoch))
        guard case .send = state.press("r") else { return XCTFail("netinspect sends it") }
        XCTAssertTrue(state.notice?.text.contains("no longer connected") == true, "\(String(describing: state.notice))")
    }
}
