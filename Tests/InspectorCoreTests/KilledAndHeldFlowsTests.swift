import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// How a killed or held flow reads: cancelled in every view once killed,
/// the hold its own phase of the waterfall, a held response complete.
final class KilledAndHeldFlowsTests: XCTestCase {
    func testAFlowKilledAfterItsResponseArrivedReadsCancelledEverywhere() {
        var killed = Fixtures.finished(1, status: 201)
        killed.state = .cancelled
        killed.error = FlowError(domain: "NSURLErrorDomain", code: -999, message: "The operation could not be completed. (NSURLErrorDomain error -999.)")
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1, method: "POST")), .flowFinished(killed)]),
                                          at: Fixtures.epoch))
        let list = state.screen()
        XCTAssertTrue(list.contains(" CXL "), list)
        XCTAssertFalse(list.contains(" 201 "), "a code reads as success:\n\(list)")
        state.press("enter", "2")
        let detail = state.screen()
        XCTAssertTrue(detail.split(separator: "\n")[0].hasSuffix("CXL"), detail)
        XCTAssertTrue(detail.contains("Cancelled: the app got a cancellation error, not this response"), detail)
        XCTAssertFalse(detail.contains("NSURLErrorDomain error -999"), "8: a kill is said in words:\n\(detail)")
        var log = Fixtures.started(1, method: "POST")
        log.apply(killed)
        XCTAssertTrue(DumpFormat.line(log, in: Fixtures.utc).contains(" CXL "), DumpFormat.line(log, in: Fixtures.utc))
    }

    func testHoldTimeIsItsOwnPhase() {
        var finished = Fixtures.finished(1, duration: 25.2)
        finished.timing.requestSent = 25.05
        finished.timing.firstResponseByte = 25.1
        let id = Fixtures.id(1)
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1)),
                                                                         .held(FlowHold(id: id, phase: .request, timeout: 60))]),
                                          at: Fixtures.epoch))
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .released(FlowRelease(id: id, phase: .request, reason: .resumed))),
                                           .message(ConnectionID(1), .flowFinished(finished))], at: Fixtures.epoch.addingTimeInterval(25)))
        state.press("enter", "3")
        let timing = state.screen()
        let line = { (name: String) in timing.split(separator: "\n").first { $0.hasPrefix(name) }.map(String.init) ?? "" }
        XCTAssertTrue(line("held ").hasSuffix("25.0 s"), timing)
        XCTAssertTrue(line("sending ").hasSuffix("50.0 ms"), timing)
    }

    func testAHeldResponseIsNotStillBeingReceived() {
        let id = Fixtures.id(1)
        let response = Response(statusCode: 200, headers: [], body: CapturedBody(data: Data("done".utf8)))
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [
            .flowStarted(Fixtures.started(1)),
            .flowResponse(FlowResponse(id: id, response: response, timing: Timing(startedAt: Fixtures.epoch))),
            .held(FlowHold(id: id, phase: .response, response: response, timeout: 60)),
        ]), at: Fixtures.epoch))
        state.press("enter", "2")
        XCTAssertTrue(state.screen().contains("HTTP 200 OK"), state.screen())
        XCTAssertFalse(state.screen().contains("receiving body"), state.screen())
    }
}
