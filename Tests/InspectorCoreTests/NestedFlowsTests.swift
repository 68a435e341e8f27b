import FlowFilter
import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// Inbound flows and the calls made while handling them: the direction
/// marker, the nested list (`T`, `-`, `_`), the filter's `~inbound`,
/// `~outbound`, `~parent` and `~id`.
final class NestedFlowsTests: XCTestCase {
    private let checkout = Fixtures.id(TracedFlows.parent)

    func testFlatListKeepsTimeOrderAndMarksTheInboundFlow() {
        let state = TracedFlows.state(size: Size(width: 120, height: 30))
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 15, 12, 13, 14])
        let screen = Renderer.render(state, size: state.size).text
        XCTAssertTrue(screen.contains("←POST"), "the received request is marked:\n\(screen)")
        XCTAssertEqual(screen.components(separatedBy: "←").count - 1, 1, "only the inbound flow is marked:\n\(screen)")
    }

    func testTreeNestsCallsUnderTheirParentWhicheverArrivesFirst() {
        for parentLast in [false, true] {
            var state = TracedFlows.state(parentLast: parentLast)
            state.press("T")
            XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 12, 13, 15, 14], "parent last: \(parentLast)")
            let tree = try! XCTUnwrap(state.tree)
            XCTAssertEqual(state.rows.map { tree.depth[$0] ?? 0 }, [0, 1, 1, 1, 0, 0], "parent last: \(parentLast)")
            state.press("T")
            XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 15, 12, 13, 14], "T again flattens")
        }
    }

    func testCallsWhoseParentIsNotInTheStoreAreTopLevel() {
        var state = TracedFlows.state(withParent: false)
        state.press("T")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [11, 15, 12, 13, 14])
        XCTAssertEqual(state.tree?.depth, [:])
    }

    func testCollapseOneParentAndAll() {
        var state = TracedFlows.state()
        state.press("-")
        XCTAssertEqual(state.notice?.isError, true, "collapsing needs the nested list")
        state.press("T", "g", "-")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 15, 14])
        XCTAssertTrue(Renderer.render(state, size: state.size).text.contains("▸[+3] /checkout"))
        state.press("-")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 12, 13, 15, 14])
        // On a call, `-` folds its parent and selects it.
        state.press("j", "j", "-")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 15, 14])
        XCTAssertEqual(state.selection, state.session.store.sequence(of: checkout))
        state.press("-", "G", "_")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 15, 14])
        state.press("_")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 12, 13, 15, 14])
    }

    func testFlowsNamingEachOtherAsParentsAreNotLost() {
        var store = FlowStore()
        var first = Fixtures.started(1)
        var second = Fixtures.started(2)
        first.parentID = second.id
        second.parentID = first.id
        _ = store.insert(first)
        _ = store.insert(second)
        let rows = store.allRecords.map(\.sequence)
        XCTAssertEqual(Set(FlowTree(rows: rows, store: store, collapsed: []).rows), Set(rows))
        XCTAssertEqual(Set(FlowTree(rows: rows, store: store, collapsed: [], collapsesAll: true).rows).count, 1,
                       "collapsed, the pair shows as one parent with its child folded")
    }

    func testDirectionParentAndIDFilters() {
        var state = TracedFlows.state()
        state.enter("~inbound", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10])
        state.enter("~outbound", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [11, 15, 12, 13, 14])
        state.enter("~parent ~u /checkout", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [11, 12, 13])
        state.enter("~parent (~inbound & ~m POST) & ~c 5xx", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [13])
        state.enter("~parent ~id \(checkout.description.lowercased().prefix(36))", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [11, 12, 13])
        state.enter("~outbound & !~parent ~inbound", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [15, 14])
        state.enter("~parent ~u /nowhere", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [])
    }

    func testParentFilterCatchesUpWhenTheParentArrivesLast() {
        var state = AppState(timeZone: Fixtures.utc)
        state.enter("~parent ~u /checkout", after: "f")
        let messages = TracedFlows.messages(parentLast: true)
        let connection = ConnectionID(1)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: Array(messages.dropLast(2))), at: Fixtures.epoch))
        XCTAssertEqual(TracedFlows.rowNumbers(state), [], "no parent yet")
        _ = Reducer.reduce(&state, .inbox(messages.suffix(2).map { .message(connection, $0) }, at: Fixtures.epoch))
        XCTAssertEqual(TracedFlows.rowNumbers(state), [11, 12, 13])
    }

    func testParentOperandErrorsNameTheProblem() {
        XCTAssertThrowsError(try FilterExpression.parse("~parent")) { error in
            XCTAssertEqual((error as? FilterParseError)?.message, "expected an expression after '~parent', found end of input")
        }
        XCTAssertThrowsError(try FilterExpression.parse("~id")) { error in
            XCTAssertEqual((error as? FilterParseError)?.message, "~id needs an argument")
        }
        XCTAssertEqual(try FilterExpression.parse("~parent !~e | ~inbound"), .or(.parent(.not(.error)), .direction(.inbound)),
                       "~parent takes one term: ! binds tighter, | looser")
    }

    func testParentNeedsAStoreToLookIn() throws {
        var call = TracedFlows.call(11, path: "/inventory/42", at: 0.01)
        let parent = TracedFlows.inbound()
        let filter = try FilterExpression.parse("~parent ~inbound")
        XCTAssertFalse(filter.matches(call), "no store (the agent, a dump): no parent")
        XCTAssertTrue(filter.matches(call, parent: { $0.parentID == parent.id ? (parent, nil) : nil }))
        call.parentID = call.id
        XCTAssertFalse(filter.matches(call, parent: { _ in (call, nil) }), "a flow is never its own parent")
    }
}
