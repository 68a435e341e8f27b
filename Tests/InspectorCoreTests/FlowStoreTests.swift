import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

final class FlowStoreTests: XCTestCase {
    func testFlowsAreKeptInArrivalOrder() {
        var store = FlowStore()
        for number in [3, 1, 2] { _ = store.insert(Fixtures.started(number)) }
        XCTAssertEqual(store.allRecords.map(\.log.id), [Fixtures.id(3), Fixtures.id(1), Fixtures.id(2)])
    }

    func testResponseAndFinishUpdateTheFlowInPlace() {
        var store = FlowStore()
        _ = store.insert(Fixtures.started(1))
        let changes = store.apply(Fixtures.finished(1, status: 201))
        XCTAssertEqual(changes, [.updated(0)])
        XCTAssertEqual(store.count, 1)
        XCTAssertEqual(store[0]?.log.response?.statusCode, 201)
        XCTAssertEqual(store[0]?.log.state, .completed)
    }

    func testEventsForUnknownFlowsAreCountedAndIgnored() {
        var store = FlowStore()
        XCTAssertEqual(store.apply(Fixtures.finished(7)), [])
        XCTAssertEqual(store.unknownFlowEvents, 1)
        XCTAssertTrue(store.isEmpty)
    }

    func testOldestFlowsAreEvictedBeyondTheLimit() {
        var store = FlowStore(limits: .init(maximumFlows: 3))
        for number in 1...5 { _ = store.insert(Fixtures.started(number)) }
        XCTAssertEqual(store.count, 3)
        XCTAssertEqual(store.evictedFlows, 2)
        XCTAssertEqual(store.allRecords.map(\.log.id), [3, 4, 5].map(Fixtures.id))
        XCTAssertNil(store.sequence(of: Fixtures.id(1)))
        XCTAssertEqual(store.apply(Fixtures.finished(1)), [], "events of evicted flows are ignored")
    }

    func testEvictionCompactsStorageAndKeepsLookupsRight() {
        var store = FlowStore(limits: .init(maximumFlows: 10))
        for number in 1...5_000 { _ = store.insert(Fixtures.started(number)) }
        XCTAssertEqual(store.count, 10)
        XCTAssertEqual(store.record(at: store.firstSequence).log.id, Fixtures.id(4_991))
        XCTAssertEqual(store.sequence(of: Fixtures.id(5_000)), 4_999)
        XCTAssertEqual(store.apply(Fixtures.finished(5_000)), [.updated(4_999)])
    }

    func testBodiesBeyondTheBudgetAreDroppedOldestFirstAndMarked() {
        var store = FlowStore(limits: .init(bodyMemoryBudget: 100))
        let sixty = String(repeating: "x", count: 60)
        for number in 1...3 {
            _ = store.insert(Fixtures.started(number))
            _ = store.apply(Fixtures.finished(number, body: sixty))
        }
        XCTAssertLessThanOrEqual(store.bodyBytes, 100)
        XCTAssertEqual(store.allRecords.map(\.bodiesDropped), [true, true, false])
        let dropped = store.allRecords.first!.log.response!.body!
        XCTAssertEqual(dropped.size, 60, "the full size is kept for display")
        XCTAssertTrue(dropped.data.isEmpty)
    }

    func testClearingRemovesEveryFlow() {
        var store = FlowStore()
        for number in 1...3 { _ = store.insert(Fixtures.started(number)) }
        XCTAssertEqual(store.removeAll(), [.cleared])
        XCTAssertTrue(store.isEmpty)
        XCTAssertEqual(store.bodyBytes, 0)
        XCTAssertEqual(store.insert(Fixtures.started(9)), [.inserted(3)])
    }

    func testHostAndPortAreReadOnceAsTheFlowArrivesWithoutUserInfo() {
        let cases: [(url: String, host: String, port: Int?)] = [
            ("https://user:pw@API.Example.com:8443/x?y", "api.example.com", 8443),
            ("http://[::1]:8080/", "::1", 8080),
            ("http://localhost", "localhost", nil),
            ("HTTP://Ünïcode.Example#frag", "ünïcode.example", nil),
            ("example.com:81/redirect?to=http://other/", "example.com", 81),
            ("https://a@b@c.example?q", "c.example", nil),
            ("", "", nil),
        ]
        var store = FlowStore()
        for (number, (url, host, port)) in cases.enumerated() {
            var log = Fixtures.started(number + 1)
            log.request.url = url
            _ = store.insert(log)
            XCTAssertEqual(store.allRecords.last?.host, host, url)
            XCTAssertEqual(store.allRecords.last?.port, port, url)
        }
    }
}

final class SessionTests: XCTestCase {
    func testAgentsAreRecordedWithWhatTheyDroppedWhileConnected() {
        var session = Session()
        _ = session.apply(Fixtures.connection(messages: [.status(AgentStatus(droppedEvents: 12)), .status(AgentStatus(droppedEvents: 15))]),
                          at: Fixtures.epoch)
        XCTAssertEqual(session.connectedAgents, 1)
        XCTAssertEqual(session.droppedEvents, 3, "the 12 of the status sent with the hello came before this inspector")
        XCTAssertEqual(session.agents.first?.hello.appName, "orders-service")
    }

    func testFlowsRememberTheirAgent() {
        var session = Session()
        _ = session.apply(Fixtures.connection(1, app: "a", messages: []), at: Fixtures.epoch)
        _ = session.apply(Fixtures.connection(2, app: "b", messages: [.flowStarted(Fixtures.started(1))]), at: Fixtures.epoch)
        XCTAssertEqual(session.store[0]?.agent, 1)
    }

    func testRejectionsAndDisconnectReasonsGoToTheEventLog() {
        var session = Session()
        _ = session.apply(Fixtures.connection(messages: []), at: Fixtures.epoch)
        _ = session.apply([
            .rejected(peer: "unix", reason: "not a netinspect frame"),
            .disconnected(ConnectionID(1), reason: "frame of 99999999 bytes exceeds the limit"),
        ], at: Fixtures.epoch)
        XCTAssertEqual(session.events.map(\.level), [.info, .error, .error])
        XCTAssertEqual(session.events[1].text, "rejected connection from unix: not a netinspect frame")
        XCTAssertTrue(session.events[2].text.contains("exceeds the limit"))
        XCTAssertEqual(session.connectedAgents, 0)
    }
}
