import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// One rule for which flow a command acts on, whether it comes from a key
/// in the list, a key in the detail view or the command bar: the flow the
/// detail view shows, else the list's selection; with neither, it says so.
final class FocusedFlowTests: XCTestCase {
    func testEveryFlowCommandSaysSoWhenNoFlowIsSelected() {
        for command in Reducer.flowCommands {
            var state = AppState(size: Size(width: 100, height: 30), timeZone: Fixtures.utc)
            XCTAssertEqual(Reducer.reduce(&state, .command(command)), .none, "\(command)")
            // A resumes every held flow (`:resume @all`), whichever is selected.
            XCTAssertEqual(state.notice?.text, command == .resumeAll ? "No flow is held" : "No flow selected", "\(command)")
        }
    }

    func testTheBarActsOnTheFlowTheDetailViewShowsNotTheListsSelection() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 30))
        state.press("g", "enter", "space")
        guard case .detail(let detail) = state.mode else { return XCTFail("detail") }
        XCTAssertNotEqual(detail.sequence, state.selection.flatMap { $0 == detail.sequence ? nil : $0 } ?? -1)
        state.enter("mark", after: ":")
        XCTAssertEqual(state.session.store[detail.sequence]?.annotation.isMarked, true)
        state.enter("comment seen twice", after: ":")
        XCTAssertEqual(state.session.store[detail.sequence]?.annotation.comment, "seen twice")
    }

    func testSearchTextAndItsFilterAreOneThing() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 30))
        state.enter("  missing ", after: "/")
        XCTAssertEqual(state.searchText, "missing")
        XCTAssertEqual(state.rows.count, 1)
        state.enter("", after: "/")
        XCTAssertNil(state.searchText)
        XCTAssertEqual(state.rows.count, 6)
        state.enter("search login", after: ":")
        XCTAssertEqual(state.rows.count, 1)
        state.press("c")
        XCTAssertNil(state.searchText)
        XCTAssertEqual(state.rows.count, 6)
    }

    func testTheReducerStampsTheEventLogWithTheTickItWasGivenNotAClock() {
        var state = AppState(size: Size(width: 100, height: 30), timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .tick(Fixtures.epoch))
        _ = Reducer.reduce(&state, .notify("disk full", isError: true))
        XCTAssertEqual(state.session.events.last?.date, Fixtures.epoch)
    }
}
