import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Every start decision of ``ExchangeControl`` as a table: the rules, what
/// server replay's store answers and a condition's draw go in as plain
/// values (no lock, no store, no generator), and the action, the effect and
/// the change record come out.
final class ExchangeControlDecisionTableTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:9/api/items")!
    private let recorded = ExchangeResponse(statusCode: 201, headers: [HTTPHeader(name: "Content-Length", value: "2")], body: Data("ok".utf8))
    private let notFound = ExchangeResponse(statusCode: 404, headers: [HTTPHeader(name: "Content-Length", value: "0")], body: Data())

    private struct Row {
        var rules: [String]
        var replays = false
        var replay: ServerReplayStore.Answer?
        var draw: Double = 0.5
        var expected: ExchangeControl.StartAction
        var latencyMilliseconds: Int64 = 0
        /// What the change record names: the rules that applied, and whether server replay answered.
        var changedBy: [String] = []
        var markedReplayed = false
    }

    private func rule(_ text: String) throws -> TrafficRule {
        let (kind, spec) = text.split(separator: " ", maxSplits: 1).map(String.init).pair
        return try TrafficRule(TrafficRule.Kind(rawValue: kind)!, spec: spec)
    }

    func testEveryStartDecisionFromItsInputs() throws {
        let app = ExchangeRequest(method: "GET", url: url, headers: [HTTPHeader(name: "Accept", value: "*/*")])
        var mapped = app
        mapped.url = URL(string: "http://127.0.0.1:10/api/items")!
        let mark = ServerReplayMark(left: 0)
        let empty503 = ExchangeResponse(statusCode: 503, headers: [HTTPHeader(name: "Content-Length", value: "0")], body: Data())
        let rows = [
            Row(rules: [], expected: .send(app)),
            Row(rules: ["map-remote |127.0.0.1:9|127.0.0.1:10"], expected: .send(mapped),
                changedBy: ["map-remote |127.0.0.1:9|127.0.0.1:10"]),
            // A draw under the share fails; at or above it, the request goes with its latency.
            Row(rules: ["condition ||latency=40ms fail=50%:reset"], draw: 0.49, expected: .fail(.reset), latencyMilliseconds: 40,
                changedBy: ["condition ||latency=40ms fail=50%:reset"]),
            Row(rules: ["condition ||latency=40ms fail=50%:reset"], draw: 0.5, expected: .send(app), latencyMilliseconds: 40,
                changedBy: ["condition ||latency=40ms fail=50%:reset"]),
            Row(rules: ["condition ||fail=50%:503"], draw: 0.1, expected: .answer(empty503), changedBy: ["condition ||fail=50%:503"]),
            // Server replay answers what the rules would send, before the network.
            Row(rules: [], replays: true, replay: .recorded(recorded, mark, wait: 0.25), expected: .answer(recorded),
                latencyMilliseconds: 250, markedReplayed: true),
            Row(rules: [], replays: true, replay: .notFound(notFound, mark), expected: .answer(notFound), markedReplayed: true),
            Row(rules: [], replays: true, replay: .kill(mark), expected: .fail(.reset), markedReplayed: true),
            Row(rules: [], replays: true, replay: nil, expected: .send(app)),
            // An answer the store has is not asked for while no replay is in force.
            Row(rules: [], replays: false, replay: .kill(mark), expected: .send(app)),
            // A condition's latency adds to a replay's recorded wait.
            Row(rules: ["condition ||latency=100ms"], replays: true, replay: .recorded(recorded, mark, wait: 0.25),
                expected: .answer(recorded), latencyMilliseconds: 350, changedBy: ["condition ||latency=100ms"], markedReplayed: true),
        ]
        for (index, row) in rows.enumerated() {
            let name = "row \(index): \(row.rules) replay \(String(describing: row.replay)) draw \(row.draw)"
            let rules = RuleSet(compiling: try row.rules.map(rule))
            var control = ExchangeControl(policy: ExchangeControl.Policy(rules: rules, breakpoints: nil, redactionMarker: "",
                                                                       holdLimit: 0, replays: row.replays))
            var asked: [ExchangeRequest] = []
            let inputs = ExchangeControl.StartInputs(replay: { asked.append($0); return row.replay }, draw: { _ in row.draw })
            XCTAssertEqual(control.start(app, inputs: inputs), row.expected, name)
            XCTAssertEqual(control.effect.latency, .milliseconds(row.latencyMilliseconds), name)
            XCTAssertEqual(control.changes?.rules ?? [], row.changedBy, name)
            XCTAssertEqual(control.changes?.serverReplay != nil, row.markedReplayed, name)
            XCTAssertEqual(asked.count, row.replays ? 1 : 0, "the store is asked once, only while a replay is in force: \(name)")
        }
    }

    func testAConditionThatCannotFailNeverDraws() throws {
        var control = ExchangeControl(policy: ExchangeControl.Policy(rules: RuleSet(compiling: [try rule("condition ||latency=5ms")]),
                                                                   breakpoints: nil, redactionMarker: "", holdLimit: 0))
        var draws = 0
        _ = control.start(ExchangeRequest(method: "GET", url: url, headers: []),
                          inputs: .init(draw: { _ in draws += 1; return 0 }))
        XCTAssertEqual(draws, 0, "a seeded generator keeps its order for the rules that can fail")
    }
}

private extension Array where Element == String {
    var pair: (String, String) { (self[0], count > 1 ? self[1] : "") }
}
