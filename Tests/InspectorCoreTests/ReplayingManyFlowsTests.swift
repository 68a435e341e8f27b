import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// `r` on marked flows and `:replay.client FILTER COUNT CONCURRENCY`
/// (Charles' Repeat Advanced): every send takes the one replay route, at
/// most CONCURRENCY are in flight, and each result is counted as its flow
/// arrives.
final class ReplayingManyFlowsTests: XCTestCase {
    /// Flows 1…count of an app that does not allow control (so netinspect's own client replays them).
    private func flows(_ count: Int, controls: Bool = false) -> AppState {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = controls
        let connection = ConnectionID(1)
        var events: [InboxEvent] = [.connected(connection, hello, peer: "unix")]
        for number in 1...count {
            let url = number % 2 == 0 ? "https://api.example.com/v1/even/\(number)" : "https://api.example.com/v1/odd/\(number)"
            events += [.message(connection, .flowStarted(Fixtures.started(number, url: url))), .message(connection, .flowFinished(Fixtures.finished(number)))]
        }
        _ = Reducer.reduce(&state, .inbox(events, at: Fixtures.epoch))
        return state
    }

    private func sends(_ effect: Effect) -> [OwnRequest] {
        switch effect {
        case .send(let own): [own]
        case .batch(let effects): effects.flatMap(sends)
        default: []
        }
    }

    /// The result of a send arriving from netinspect's own client, as `ReplayClient` posts it.
    private func result(_ number: Int, of own: OwnRequest, state flowState: FlowState = .completed, in state: inout AppState) -> Effect {
        var log = NetworkLog(id: Fixtures.id(number), request: own.request, timing: Timing(startedAt: Fixtures.epoch),
                             changes: FlowChanges(rules: [], replayOf: own.replayOf))
        log.source = CaptureSource(client: .init(rawValue: OwnRequest.clientName))
        let end = FlowFinished(id: Fixtures.id(number), state: flowState, timing: Timing(startedAt: Fixtures.epoch, finished: 0.1))
        return Reducer.reduce(&state, .inbox([.message(OwnRequest.connection, .flowStarted(log)),
                                              .message(OwnRequest.connection, .flowFinished(end))], at: Fixtures.epoch))
    }

    func testReplayClientRepeatsEachMatchingFlowAtTheConcurrencyAsked() {
        var state = flows(4)
        var inFlight = sends(state.enter("replay.client ~u /odd/ 3 2", after: ":"))
        XCTAssertEqual(state.notice?.text, "Replaying 2 flows × 3 = 6 requests, at most 2 at once")
        XCTAssertEqual(inFlight.map(\.replayOf), [Fixtures.id(1), Fixtures.id(3)], "two in flight at first")
        var replayed = inFlight.map(\.replayOf)
        var delivered = 0
        while !inFlight.isEmpty {
            let next = inFlight.removeFirst()
            delivered += 1
            // The third one fails, to be counted as such.
            let more = sends(result(100 + delivered, of: next, state: delivered == 3 ? .failed : .completed, in: &state))
            replayed += more.map(\.replayOf)
            inFlight += more
            XCTAssertLessThanOrEqual(inFlight.count, 2, "never more than 2 in flight")
        }
        XCTAssertEqual(replayed, [1, 3, 1, 3, 1, 3].map(Fixtures.id), "each matching flow three times")
        XCTAssertEqual(state.notice, Notice(text: "Replay done: 6 sent: 5 finished, 1 failed", isError: true))
        XCTAssertTrue(state.session.events.contains { $0.text == "Replay done: 6 sent: 5 finished, 1 failed" }, "kept in the event log")
        XCTAssertEqual(state.session.store.count, 4 + 6, "each result is a flow")
    }

    func testReplaysAnAppWasSendingWhenItLeftCountAsFailed() {
        var state = flows(2, controls: true)
        XCTAssertEqual(state.enter("replay.client @all 2 10", after: ":"), .batch([1, 2, 1, 2].map { .control(.replay(Fixtures.id($0)), to: ConnectionID(1)) }))
        var started = Fixtures.started(50, url: "https://api.example.com/v1/odd/1")
        started.changes = FlowChanges(rules: [], replayOf: Fixtures.id(1))
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(started)),
                                           .message(ConnectionID(1), .flowFinished(Fixtures.finished(50)))], at: Fixtures.epoch))
        XCTAssertEqual(state.replayJobs.first?.inFlight, 3)
        _ = Reducer.reduce(&state, .inbox([.disconnected(ConnectionID(1), reason: nil)], at: Fixtures.epoch))
        XCTAssertEqual(state.notice, Notice(text: "Replay done: 4 sent: 1 finished, 3 failed", isError: true))
        XCTAssertTrue(state.replayJobs.isEmpty)
    }

    func testReplayClientArgumentsAreChecked() {
        var state = flows(2)
        XCTAssertEqual(state.enter("replay.client", after: ":"), .none)
        XCTAssertEqual(state.notice?.text, "replay.client needs FILTER [COUNT] [CONCURRENCY]")
        XCTAssertEqual(state.enter("replay.client ~q(( 2", after: ":"), .none)
        XCTAssertTrue(state.notice?.text.hasPrefix("Invalid filter \"~q((\"") == true, "\(String(describing: state.notice))")
        XCTAssertEqual(state.enter("replay.client @all 0", after: ":"), .none)
        XCTAssertTrue(state.notice?.text.hasPrefix("COUNT must be 1 to 10000, not 0") == true, "\(String(describing: state.notice))")
        XCTAssertEqual(state.enter("replay.client ~u /v1/ 2 0", after: ":"), .none)
        XCTAssertTrue(state.notice?.text.hasPrefix("CONCURRENCY must be at least 1") == true, "\(String(describing: state.notice))")
        XCTAssertEqual(state.enter("replay.client ~d nowhere.example", after: ":"), .none)
        XCTAssertEqual(state.notice?.text, "No flow matches ~d nowhere.example: nothing replayed")
        // A number a filter needs stays the filter's: ~c 200 is no count.
        XCTAssertEqual(sends(state.enter("replay.client ~c 200", after: ":")).count, 1, "one at a time by default")
        XCTAssertEqual(state.notice?.text, "Replaying 2 flows, at most 1 at once")
        // A selection, as :replay takes: every flow, each twice, all at once.
        XCTAssertEqual(sends(state.enter("replay.client @all 2 10", after: ":")).count, 4)
        XCTAssertEqual(state.notice?.text, "Replaying 2 flows × 2 = 4 requests")
    }

    func testRAppliesToEveryMarkedFlowWhenTheSelectedOneIsMarked() {
        var state = flows(4, controls: true)
        state.press("g", "m", "j", "j", "m")
        let effect = state.press("r")
        XCTAssertEqual(effect, .batch([.control(.replay(Fixtures.id(1)), to: ConnectionID(1)),
                                       .control(.replay(Fixtures.id(3)), to: ConnectionID(1))]),
                       "the app's agent replays both marked flows")
        XCTAssertEqual(state.notice?.text, "Replaying 2 flows")
        state.press("j")
        XCTAssertEqual(state.press("r"), .control(.replay(Fixtures.id(4)), to: ConnectionID(1)), "on an unmarked flow, r replays that one")
    }
}
