import FlowFilter
import Foundation
import WireProtocol
import XCTest

/// mitmproxy's `~replay`, `~replayq` (client replay) and `~replays` (server replay).
final class ReplayFilterTests: XCTestCase {
    private func flow(_ changes: FlowChanges?) -> NetworkLog {
        var log = NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1/a"), timing: Timing(startedAt: Date()))
        log.changes = changes
        return log
    }

    func testEachTermSelectsItsReplays() throws {
        let sentAgain = flow(FlowChanges(rules: [], replayOf: FlowID()))
        let fromRecording = flow(FlowChanges(rules: [], serverReplay: ServerReplayMark(left: 3)))
        let mapped = flow(FlowChanges(rules: ["map-remote |a|b"], originalURL: "http://a/"))
        let plain = flow(nil)
        let flows = [sentAgain, fromRecording, mapped, plain]
        func matching(_ text: String) throws -> [Bool] {
            let filter = try FilterExpression.parse(text)
            return flows.map { filter.matches($0) }
        }
        XCTAssertEqual(try matching("~replay"), [true, true, false, false])
        XCTAssertEqual(try matching("~replayq"), [true, false, false, false])
        XCTAssertEqual(try matching("~replays"), [false, true, false, false])
        XCTAssertEqual(try matching("!~replays"), [true, false, true, true])
    }
}
