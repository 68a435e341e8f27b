import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// A flow held at a breakpoint can be reached: the first one stops a
/// following list on it (README's walk-through: "the next POST waits with
/// HELD, Enter shows it"), and `h` goes to the next held flow.
final class HeldFlowNavigationTests: XCTestCase {
    private let connection = ConnectionID(1)

    private func following() -> AppState {
        var state = AppState(size: Size(width: 120, height: 30), timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        _ = Reducer.reduce(&state, .inbox([.connected(connection, hello, peer: "unix")], at: Fixtures.epoch))
        XCTAssertTrue(state.follows)
        return state
    }

    private func arrive(_ messages: [Message], in state: inout AppState) {
        _ = Reducer.reduce(&state, .inbox(messages.map { .message(connection, $0) }, at: Fixtures.epoch))
    }

    private func hold(_ number: Int) -> Message { .held(FlowHold(id: Fixtures.id(number), phase: .request, timeout: 60)) }

    func testTheFirstHeldFlowStopsTheFollowingListOnItSoEnterOpensIt() {
        var state = following()
        arrive([.flowStarted(Fixtures.started(1)), .flowStarted(Fixtures.started(2, method: "POST")), hold(2)], in: &state)
        // The demo's pace: more flows arrive after the hold.
        arrive((3...8).map { .flowStarted(Fixtures.started($0)) }, in: &state)
        XCTAssertFalse(state.follows)
        XCTAssertEqual(state.selection, state.session.store.sequence(of: Fixtures.id(2)))
        XCTAssertTrue(state.notice?.text.contains("POST /v1/items/2") == true, "\(String(describing: state.notice))")
        state.press("enter")
        guard case .detail(let detail) = state.mode else { return XCTFail("enter opens the held flow") }
        XCTAssertEqual(state.session.store[detail.sequence]?.log.id, Fixtures.id(2))
    }

    func testALaterHoldDoesNotMoveACursorThePersonPlaced() {
        var state = following()
        arrive([.flowStarted(Fixtures.started(1)), hold(1), .flowStarted(Fixtures.started(2)), .flowStarted(Fixtures.started(3))], in: &state)
        state.press("G")
        arrive([hold(3)], in: &state)
        XCTAssertEqual(state.selection, state.session.store.sequence(of: Fixtures.id(3)), "the cursor stays where G put it")
        state.press("g")
        arrive([.flowStarted(Fixtures.started(4)), hold(4)], in: &state)
        XCTAssertEqual(state.cursor, 0, "one flow was already held: nothing jumps")
    }

    func testAfterTheHeldFlowGoesOnTheNextHoldMovesACursorLeftWhereTheLastHoldPutIt() {
        var state = following()
        arrive([.flowStarted(Fixtures.started(1)), hold(1)], in: &state)
        state.press("enter", "q")
        arrive([.released(FlowRelease(id: Fixtures.id(1), phase: .request, reason: .resumed)),
                .flowStarted(Fixtures.started(2)), .flowStarted(Fixtures.started(3)), hold(3)], in: &state)
        XCTAssertEqual(state.selection, state.session.store.sequence(of: Fixtures.id(3)), "X now kills the held flow, not the one before")
    }

    func testHGoesToTheNextHeldFlowAndWrapsAround() {
        var state = following()
        arrive((1...5).map { .flowStarted(Fixtures.started($0)) } + [hold(2), hold(4)], in: &state)
        state.press("g")
        state.press("h")
        XCTAssertEqual(state.selection, state.session.store.sequence(of: Fixtures.id(2)))
        state.press("h")
        XCTAssertEqual(state.selection, state.session.store.sequence(of: Fixtures.id(4)))
        state.press("h")
        XCTAssertEqual(state.selection, state.session.store.sequence(of: Fixtures.id(2)), "after the last, the first again")
    }

    func testHWithNothingHeldSaysHowToHold() {
        var state = following()
        arrive([.flowStarted(Fixtures.started(1))], in: &state)
        state.press("h")
        XCTAssertEqual(state.notice?.isError, true)
        XCTAssertTrue(state.notice?.text.contains("No flow is held (i sets breakpoints)") == true, "\(String(describing: state.notice))")
    }
}
