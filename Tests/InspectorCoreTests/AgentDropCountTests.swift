import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// The status bar counts what this inspector missed, among the apps it
/// watches: an agent's drops from before it connected are logged, not
/// counted, and netinspect's own client is not one of the agents.
final class AgentDropCountTests: XCTestCase {
    private func statusBar(_ state: AppState) -> String {
        String(Renderer.render(state, size: state.size).text.split(separator: "\n", omittingEmptySubsequences: false)[state.size.height - 1])
    }

    func testDropsBeforeTheInspectorConnectedAreLoggedNotCounted() {
        var state = AppState(size: Size(width: 120, height: 30), timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.status(AgentStatus(droppedEvents: 9))]), at: Fixtures.epoch))
        XCTAssertEqual(state.session.droppedEvents, 0)
        XCTAssertFalse(statusBar(state).contains("dropped"), statusBar(state))
        XCTAssertTrue(state.session.events.contains { $0.text.contains("orders-service had dropped 9 events before this inspector connected") },
                      "\(state.session.events)")
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .status(AgentStatus(droppedEvents: 12)))], at: Fixtures.epoch))
        XCTAssertEqual(state.session.droppedEvents, 3)
        XCTAssertTrue(statusBar(state).contains("│ dropped 3"), statusBar(state))
    }

    func testNetinspectsOwnClientIsNotCountedAsAnAgent() {
        var state = AppState(size: Size(width: 120, height: 30), timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: []), at: Fixtures.epoch))
        let own = Hello(agentName: OwnRequest.clientName, agentVersion: "", appName: OwnRequest.clientName, processID: 1, hostName: "here")
        _ = Reducer.reduce(&state, .inbox([.connected(OwnRequest.connection, own, peer: "netinspect")], at: Fixtures.epoch))
        XCTAssertEqual(state.session.connectedAgents, 1)
        XCTAssertTrue(statusBar(state).contains("│ 1 agent"), statusBar(state))
    }
}
