import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// How a flow server replay answered shows: the list's `≈`, the detail's
/// line, the status bar's count, the `--dump` line.
final class ServerReplayViewTests: XCTestCase {
    private func replayed(_ number: Int, left: Int, extra: String? = nil) -> NetworkLog {
        var log = Fixtures.started(number, url: "http://127.0.0.1:8080/v1/item/\(number)")
        log.changes = FlowChanges(rules: [], serverReplay: ServerReplayMark(recordedID: Fixtures.id(90 + number), left: left, extra: extra))
        return log
    }

    private func state(after logs: [NetworkLog], responses: Int = 3) -> AppState {
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .serverReplayChanged(ServerReplayProgress(summary: "run.har: \(responses) responses", responses: responses)))
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: logs.map { .flowStarted($0) }), at: Fixtures.epoch))
        return state
    }

    func testTheListMarksReplayedFlowsAndTheStatusBarCountsWhatIsLeft() {
        let plain = Fixtures.started(3, url: "http://127.0.0.1:8080/v1/plain")
        let screen = Renderer.render(state(after: [replayed(1, left: 2), replayed(2, left: 1), plain]), size: Size(width: 120, height: 20)).text
        let lines = screen.split(separator: "\n")
        func row(_ path: String) -> String { String(lines.first { $0.contains(path) } ?? "") }
        XCTAssertTrue(row("/v1/item/1").contains("≈ /v1/item/1"), row("/v1/item/1"))
        XCTAssertFalse(row("/v1/plain").contains("≈"), row("/v1/plain"))
        XCTAssertTrue(screen.contains("replay: 1 left"), screen)
    }

    func testTheStatusBarCountsEachFlowOnceWhenItsFinishCarriesTheMarkToo() {
        var state = state(after: [replayed(1, left: 2)])
        var finished = Fixtures.finished(1, status: 200)
        finished.changes = replayed(1, left: 2).changes
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowFinished(finished))], at: Fixtures.epoch))
        XCTAssertEqual(state.session.serverReplay?.answered, 1)
    }

    func testTheDetailSaysWhereTheAnswerCameFromAndTheDumpLineSaysSo() {
        var state = state(after: [replayed(1, left: 2)])
        state.press("g", "enter")
        let text = Renderer.render(state, size: Size(width: 140, height: 30)).text
        XCTAssertTrue(text.contains("Server replay answered from recorded flow \(Fixtures.id(91).description.prefix(8)); nothing went on the network; 2 left"), text)
        XCTAssertTrue(DumpFormat.line(replayed(1, left: 0), in: Fixtures.utc).hasSuffix("≈server replay"))
        XCTAssertTrue(DumpFormat.line(replayed(2, left: 0, extra: "404"), in: Fixtures.utc).hasSuffix("≈server replay: 404"))
    }

    func testTheMarkSurvivesAHARRoundTrip() throws {
        var log = replayed(1, left: 4)
        log.response = Response(statusCode: 200)
        let read = try HARFile.decode(try HARFile.encode([log]))
        XCTAssertEqual(read.first?.changes?.serverReplay, log.changes?.serverReplay)
    }
}
