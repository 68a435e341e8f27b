import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// Rules, server replay and breakpoints change only an app that allows
/// control: one that connects without it while any is on is named, in the
/// event log and the status line, rather than left to look unmatched.
final class AppsWithoutControlAreNamedTests: XCTestCase {
    private func connect(_ hello: Hello, into state: inout AppState, number: UInt64 = 1) {
        _ = Reducer.reduce(&state, .inbox([.connected(ConnectionID(number), hello, peer: "unix")], at: Fixtures.epoch.addingTimeInterval(10)))
    }

    func testAnAppWithoutControlConnectingWhileAServerReplayIsOnIsNamedOnce() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .serverReplayChanged(ServerReplayProgress(summary: "recorded.jsonl: 3 responses", responses: 3)))
        connect(Fixtures.hello(app: "shop", pid: 42), into: &state)
        let lines = state.session.events.map(\.text).filter { $0.contains("does not allow control") }
        XCTAssertEqual(lines.count, 1, state.session.events.map(\.text).joined(separator: "\n"))
        let line = lines.first ?? ""
        XCTAssertTrue(line.contains("shop (pid 42)") && line.contains("server replay") && line.contains("NETINSPECT_CONTROL=1"), line)
        XCTAssertTrue(state.screen().contains("does not allow control"), state.screen())
    }

    func testAnAppThatAllowsControlOrNothingNeedingItIsNotNamed() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        connect(Fixtures.hello(app: "shop"), into: &state)
        _ = Reducer.reduce(&state, .serverReplayChanged(ServerReplayProgress(summary: "recorded.jsonl: 3 responses", responses: 3)))
        var controlled = Fixtures.hello(app: "other")
        controlled.acceptsControl = true
        connect(controlled, into: &state, number: 2)
        XCTAssertEqual(state.session.events.filter { $0.text.contains("does not allow control") && $0.text.contains("other") }.count, 0)
    }
}
