import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// A key acts on the focused flow; the command bar names others as
/// mitmproxy's does (`:replay @marked`, `:resume @all`, `:delete @shown`),
/// and says so when the selection holds no flow it can act on.
final class FlowSelectionTests: XCTestCase {
    private let connection = ConnectionID(7)

    /// Flows 1 to 3 from an app that allows control; 1 and 3 held at the request.
    private func heldState() -> AppState {
        var state = AppState(size: Size(width: 100, height: 30), timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        var events: [InboxEvent] = [.connected(connection, hello, peer: "unix")]
        for number in 1...3 { events.append(.message(connection, .flowStarted(Fixtures.started(number)))) }
        for number in [1, 3] {
            events.append(.message(connection, .held(FlowHold(id: Fixtures.id(number), phase: .request, timeout: 60))))
        }
        _ = Reducer.reduce(&state, .inbox(events, at: Fixtures.epoch))
        return state
    }

    func testMarkShownMarksWhatTheFilterShowsThenUnmarksThemAll() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 30))
        state.enter("~d api.example.com", after: "f")
        let shown = state.rows
        XCTAssertEqual(shown.count, 3)
        state.enter("mark @shown", after: ":")
        XCTAssertEqual(state.session.store.markedSequences.sorted(), shown.sorted())
        XCTAssertEqual(state.notice?.text, "Marked 3 flows")
        state.enter("mark @shown", after: ":")
        XCTAssertEqual(state.session.store.markedSequences, [], "all were marked, so the same command unmarks them")
        XCTAssertEqual(state.notice?.text, "Unmarked 3 flows")
    }

    func testReplayMarkedReplaysEachMarkedFlowOnce() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 30))
        state.press("g", "m", "j", "m")
        let effect = state.enter("replay @marked", after: ":")
        guard case .batch(let effects) = effect else { return XCTFail("\(effect)") }
        // The app does not allow control, so netinspect sends each itself.
        let replayed = effects.compactMap { effect -> FlowID? in
            if case .send(let request) = effect { return request.replayOf } else { return nil }
        }
        let marked = state.session.store.markedSequences.compactMap { state.session.store[$0]?.log.id }
        XCTAssertEqual(replayed, marked)
        XCTAssertEqual(state.notice?.text, "Replaying 2 flows")
    }

    func testResumeAllIsWhatAKeyDoesAndActsOnlyOnHeldFlows() {
        var state = heldState()
        let expected = Effect.batch([1, 3].map { .control(.resume(FlowResume(id: Fixtures.id($0))), to: connection) })
        XCTAssertEqual(state.enter("resume @all", after: ":"), expected)
        XCTAssertEqual(state.notice?.text, "Resumed 2 held flows")
        var keyed = heldState()
        XCTAssertEqual(keyed.press("A"), expected)
    }

    func testKillMarkedKillsTheMarkedHeldFlowsAndSaysWhenNoneIs() {
        var state = heldState()
        state.enter("kill @marked", after: ":")
        XCTAssertEqual(state.notice, Notice(text: "No marked flow is held", isError: true))
        state.press("g", "m", "j", "m")
        XCTAssertEqual(state.enter("kill @marked", after: ":"), .batch([.control(.kill(Fixtures.id(1)), to: connection)]),
                       "flow 2 is marked but not held")
    }

    func testDeleteMarkedDeletesThemAndKeepsTheRest() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 30))
        let before = state.session.store.count
        state.press("g", "m", "j", "m")
        state.enter("delete @marked", after: ":")
        XCTAssertEqual(state.session.store.count, before - 2)
        XCTAssertEqual(state.session.store.markedSequences, [])
        XCTAssertEqual(state.notice?.text, "Deleted 2 flows")
    }

    func testAnUnknownSelectionIsRefusedAndNothingHappens() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 30))
        let before = state.session.store.count
        XCTAssertEqual(state.enter("delete @everything", after: ":"), .none)
        XCTAssertEqual(state.notice, Notice(text: "delete acts on @focus, @marked, @shown, @all, not \"@everything\"", isError: true))
        XCTAssertEqual(state.session.store.count, before)
    }

    func testTheBarCompletesSelections() {
        XCTAssertEqual(CommandBar.complete("replay @m"), "replay @marked")
    }
}
