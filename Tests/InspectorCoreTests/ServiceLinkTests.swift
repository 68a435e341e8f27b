import FlowFilter
import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// A captured service's request linked to the captured call that carried
/// it, by the connection both agents saw (the call's local address is the
/// request's peer): the decision alone, the index that keeps it as events
/// arrive in any order, and what the nested view, `~parent` and `--dump`
/// make of it.
final class ServiceLinkTests: XCTestCase {
    private let at = Fixtures.epoch

    private func call(_ number: Int, from address: String = "127.0.0.1:50000", at offset: Double, lasting duration: Double? = nil) -> NetworkLog {
        var log = Fixtures.started(number, url: "http://127.0.0.1:9000/stock", at: offset)
        log.localAddress = address
        if let duration {
            log.timing.finished = duration
            log.state = .completed
        }
        return log
    }

    private func received(_ number: Int, from address: String = "127.0.0.1:50000", at offset: Double) -> NetworkLog {
        var log = Fixtures.started(number, url: "http://127.0.0.1:9000/stock", at: offset)
        log.direction = .inbound
        log.peer = address
        return log
    }

    private func endpoint(call log: NetworkLog, host: String = "build-7") -> FlowLink.Endpoint {
        FlowLink.Endpoint(call: log, host: host)!
    }

    private func endpoint(received log: NetworkLog, host: String = "build-7") -> FlowLink.Endpoint {
        FlowLink.Endpoint(received: log, host: host)!
    }

    // MARK: The decision

    func testACallMadeTheRequestThatCameFromItsAddressWhileItRan() {
        XCTAssertTrue(FlowLink.made(endpoint(call: call(1, at: 10, lasting: 0.050)), endpoint(received: received(2, at: 10.010))))
        XCTAssertTrue(FlowLink.made(endpoint(call: call(1, at: 10)), endpoint(received: received(2, at: 10.010))),
                      "a call still running spans everything after its start")
        XCTAssertFalse(FlowLink.made(endpoint(call: call(1, at: 10, lasting: 0.050)), endpoint(received: received(2, from: "127.0.0.1:50001", at: 10.010))),
                       "another connection")
    }

    func testARequestBeforeTheCallOrAfterItsEndIsNotItsOwn() {
        let running = endpoint(call: call(1, at: 10, lasting: 0.050))
        XCTAssertFalse(FlowLink.made(running, endpoint(received: received(2, at: 9.990))))
        XCTAssertFalse(FlowLink.made(running, endpoint(received: received(2, at: 10.060))))
    }

    func testTheSameLoopbackAddressOnAnotherHostIsNoLink() {
        XCTAssertFalse(FlowLink.made(endpoint(call: call(1, at: 10, lasting: 0.050), host: "build-7"),
                                     endpoint(received: received(2, at: 10.010), host: "build-8")))
        var links = FlowLinks()
        links.note(call(1, at: 10, lasting: 0.050), host: "build-7")
        links.note(received(2, at: 10.010), host: "build-8")
        XCTAssertNil(links.callerOf[Fixtures.id(2)])
    }

    func testOnlyFlowsThatRecordedTheirEndsTakePart() {
        XCTAssertNil(FlowLink.Endpoint(call: Fixtures.started(1), host: "h"), "no local address")
        XCTAssertNil(FlowLink.Endpoint(received: call(1, at: 10), host: "h"), "a call is not a received request")
        XCTAssertNil(FlowLink.Endpoint(call: received(1, at: 10), host: "h"), "a received request is not a call")
    }

    // MARK: Kept as events arrive

    func testAReusedPortLinksEachRequestToTheCallUnderWayThen() {
        var links = FlowLinks()
        links.note(call(1, at: 10, lasting: 0.050), host: "build-7")
        links.note(received(2, at: 10.010), host: "build-7")
        links.note(call(3, at: 11, lasting: 0.050), host: "build-7")
        links.note(received(4, at: 11.010), host: "build-7")
        XCTAssertEqual(links.callerOf[Fixtures.id(2)], Fixtures.id(1))
        XCTAssertEqual(links.callerOf[Fixtures.id(4)], Fixtures.id(3))
        links.note(received(5, at: 10.500), host: "build-7")
        XCTAssertNil(links.callerOf[Fixtures.id(5)], "between the two calls, from an uncaptured client")
    }

    func testTheLinkIsTheSameWhicheverAgentsEventsArriveFirst() {
        var links = FlowLinks()
        XCTAssertEqual(links.note(received(2, at: 10.010), host: "build-7"), [], "no call yet")
        XCTAssertEqual(links.note(call(1, at: 10), host: "build-7"), [Fixtures.id(2)], "the request's caller changed")
        XCTAssertEqual(links.callerOf[Fixtures.id(2)], Fixtures.id(1))
        XCTAssertEqual(links.calleesOf[Fixtures.id(1)], [Fixtures.id(2)])
        XCTAssertEqual(links.note(call(1, at: 10, lasting: 0.050), host: "build-7"), [], "its end changes nothing")
    }

    func testAKeepAliveConnectionsNextCallTakesTheRequestItCarried() {
        var links = FlowLinks()
        links.note(call(1, at: 10), host: "build-7")                 // its end not here yet
        links.note(received(2, at: 10.010), host: "build-7")
        links.note(received(4, at: 11.010), host: "build-7")         // before the next call's start
        XCTAssertEqual(links.callerOf[Fixtures.id(4)], Fixtures.id(1))
        links.note(call(3, at: 11), host: "build-7")
        XCTAssertEqual(links.callerOf[Fixtures.id(4)], Fixtures.id(3))
        XCTAssertEqual(links.callerOf[Fixtures.id(2)], Fixtures.id(1))
        XCTAssertEqual(links.calleesOf[Fixtures.id(1)], [Fixtures.id(2)])
    }

    func testTheIndexForgetsTheOldestFlowsPastItsLimit() {
        var links = FlowLinks(limit: 4)
        for round in 0..<10 {
            let offset = 10 + Double(round)
            links.note(call(100 + round, at: offset, lasting: 0.050), host: "build-7")
            links.note(received(200 + round, at: offset + 0.010), host: "build-7")
        }
        XCTAssertEqual(links.callerOf.count, 2, "only the latest pairs are remembered")
        XCTAssertEqual(links.callerOf[Fixtures.id(209)], Fixtures.id(109))
    }

    // MARK: In the inspector

    /// The shop (pid 100) calls the stock service (pid 200): both apps are `svc`.
    private func twoServices(stockFirst: Bool) -> AppState {
        var state = AppState(timeZone: Fixtures.utc)
        let shop = ConnectionID(1), stock = ConnectionID(2)
        var checkout = Fixtures.started(10, method: "POST", url: "http://127.0.0.1:8080/checkout", at: 9.9)
        checkout.direction = .inbound
        var stockCall = call(11, at: 10, lasting: 0.050)
        stockCall.parentID = checkout.id
        let shopEvents: [InboxEvent] = [.message(shop, .flowStarted(checkout)), .message(shop, .flowStarted(stockCall))]
        let stockEvents: [InboxEvent] = [.message(stock, .flowStarted(received(12, at: 10.010)))]
        let hellos: [InboxEvent] = [.connected(shop, Fixtures.hello(app: "svc", pid: 100), peer: "unix"),
                                    .connected(stock, Fixtures.hello(app: "svc", pid: 200), peer: "unix")]
        _ = Reducer.reduce(&state, .inbox(hellos + (stockFirst ? stockEvents + shopEvents : shopEvents + stockEvents), at: at))
        return state
    }

    func testTheCalleesRequestNestsUnderTheCallersCall() {
        for stockFirst in [false, true] {
            var state = twoServices(stockFirst: stockFirst)
            XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 12])
            state.press("T")
            XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 12])
            let depth = state.rows.map { state.tree?.depth[$0] ?? 0 }
            XCTAssertEqual(depth, [0, 1, 2], "stock's request under the shop's call (stock first: \(stockFirst))")
        }
    }

    func testACallWhoseAddressCameWithItsEndIsLinkedThen() {
        var state = AppState(timeZone: Fixtures.utc)
        let shop = ConnectionID(1), stock = ConnectionID(2)
        var started = call(11, at: 10)
        started.localAddress = nil     // URLSession: libcurl connects after the flow starts
        let finished = FlowFinished(id: started.id, state: .completed, timing: Timing(startedAt: started.timing.startedAt, finished: 0.050),
                                    localAddress: "127.0.0.1:50000")
        _ = Reducer.reduce(&state, .inbox([
            .connected(shop, Fixtures.hello(app: "shop", pid: 100), peer: "unix"),
            .connected(stock, Fixtures.hello(app: "stock", pid: 200), peer: "unix"),
            .message(shop, .flowStarted(started)), .message(stock, .flowStarted(received(12, at: 10.010))),
        ], at: at))
        state.press("T")
        XCTAssertEqual(state.rows.map { state.tree?.depth[$0] ?? 0 }, [0, 0], "no address yet")
        _ = Reducer.reduce(&state, .inbox([.message(shop, .flowFinished(finished))], at: at))
        XCTAssertEqual(state.rows.map { state.tree?.depth[$0] ?? 0 }, [0, 1])
    }

    func testParentFollowsTheLinkAndAppAndPidTellTheInstancesApart() {
        var state = twoServices(stockFirst: true)
        state.enter("~parent ~pid 100", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [11, 12], "the checkout's call, and the request that call made")
        state.enter("~inbound & ~parent ~outbound", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [12])
        state.enter("~pid 200", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [12])
        state.enter("~app ^svc$", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [10, 11, 12])
        state.enter("~app other", after: "f")
        XCTAssertEqual(TracedFlows.rowNumbers(state), [])
    }

    func testAppAndPidMatchTheOriginTheInspectorKnowsAndNothingElse() throws {
        let log = Fixtures.started(1)
        let origin = FlowOrigin(app: "checkout-py", processID: 4242, host: "node-7")
        XCTAssertTrue(try FilterExpression.parse("~app checkout & ~pid 4242").matches(log, origin: origin))
        XCTAssertFalse(try FilterExpression.parse("~pid 4243").matches(log, origin: origin))
        XCTAssertFalse(try FilterExpression.parse("~app checkout").matches(log), "no origin (the agent's rules, a file)")
        XCTAssertFalse(try FilterExpression.parse("!~pid 1").matches(log, origin: origin) == false)
        XCTAssertThrowsError(try FilterExpression.parse("~pid x")) { error in
            XCTAssertEqual((error as? FilterParseError)?.message, "~pid needs a process id like 4242")
        }
    }

    func testTheListNamesEachInstanceByItsProcessWhenTheyShareAName() {
        let state = twoServices(stockFirst: false)
        let screen = Renderer.render(state, size: Size(width: 120, height: 20)).text
        let lines = screen.components(separatedBy: "\n")
        XCTAssertTrue(lines.contains { $0.contains("svc[100]") && $0.contains("/checkout") }, screen)
        XCTAssertTrue(lines.contains { $0.contains("svc[200]") && $0.contains("←GET") }, screen)
    }

    // MARK: --dump

    func testDumpPairsTheLinesWhicheverIsWrittenFirst() {
        let shop = ConnectionID(1), stock = ConnectionID(2)
        let hellos: [InboxEvent] = [.connected(shop, Fixtures.hello(app: "shop", pid: 100), peer: "unix"),
                                    .connected(stock, Fixtures.hello(app: "stock", pid: 200), peer: "unix")]
        let finishedCall = FlowAssembler.Finished(log: call(1, at: 10, lasting: 0.050), agent: Fixtures.hello(app: "shop", pid: 100))
        var request = received(2, at: 10.010)
        request.timing.finished = 0.010
        let finishedRequest = FlowAssembler.Finished(log: request, agent: Fixtures.hello(app: "stock", pid: 200))

        // The call had arrived, whole or its start: the request names it.
        for callFirst in [false, true] {
            var links = DumpLinks()
            for event in hellos + [.message(shop, .flowStarted(call(1, at: 10)))] { links.note(event) }
            if callFirst { XCTAssertNil(links.mark(finishedCall), "nothing to name yet") }
            XCTAssertEqual(links.mark(finishedRequest), .madeBy(Fixtures.id(1)))
            if !callFirst { XCTAssertNil(links.mark(finishedCall), "the request named it") }
        }
        let callLine = DumpFormat.line(finishedCall.log, in: Fixtures.utc, app: "shop")
        let requestLine = DumpFormat.line(request, in: Fixtures.utc, app: "stock", link: .madeBy(Fixtures.id(1)))
        XCTAssertTrue(callLine.hasPrefix("09:30:10.000 shop GET "), callLine)
        XCTAssertTrue(callLine.hasSuffix("  #00000000"), "a call with its local address shows its id: \(callLine)")
        XCTAssertTrue(requestLine.hasSuffix("  #00000000  ↑00000000"), requestLine)
        XCTAssertFalse(DumpFormat.line(Fixtures.started(3), in: Fixtures.utc).contains("#"), "other calls as before")

        // The request was written before the call was known: the call names it.
        var links = DumpLinks()
        for event in hellos { links.note(event) }
        XCTAssertNil(links.mark(finishedRequest))
        XCTAssertEqual(links.mark(finishedCall), .answeredBy(Fixtures.id(2)))
        XCTAssertTrue(DumpFormat.line(finishedCall.log, in: Fixtures.utc, link: .answeredBy(Fixtures.id(2))).hasSuffix("  #00000000  ↓00000000"))
    }

    func testJSONLinesCarryTheAppAndStillReadBack() throws {
        let log = call(1, at: 10, lasting: 0.050)
        let line = log.jsonLine(app: Fixtures.hello(app: "checkout-py", pid: 0))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: line) as? [String: Any])
        let app = try XCTUnwrap(object["app"] as? [String: Any])
        XCTAssertEqual(app["name"] as? String, "checkout-py")
        XCTAssertEqual(app["pid"] as? Int, 0)
        XCTAssertEqual(app["host"] as? String, "build-7")
        XCTAssertEqual(object["localAddress"] as? String, "127.0.0.1:50000")
        XCTAssertEqual(try NetworkLog(jsonLine: line), log)
    }
}
