import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// What the control core decides for a `condition` rule, without I/O: the
/// effect an adapter carries out, the failure ``ExchangeControl/start(_:)``
/// returns, what the log is to show, and the same failures for the same seed.
final class NetworkConditionControlTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:9/api/items?q=1")!

    private func policy(_ specs: [String]) throws -> ExchangeControl.Policy {
        let rules = try specs.map { try TrafficRule(.condition, spec: $0) }
        return ExchangeControl.Policy(rules: RuleSet(compiling: rules), breakpoints: nil, redactionMarker: "<redacted>", holdLimit: 1024)
    }

    /// Each condition rule's own generator, as the agent draws from it.
    private let generators = ExchangeControl.StartInputs(draw: { $0.draws.next() })

    private func request(_ path: String = "/api/items") -> ExchangeRequest {
        ExchangeRequest(method: "GET", url: URL(string: "http://127.0.0.1:9\(path)")!, headers: [])
    }

    func testAMatchingConditionSendsTheRequestWithItsEffectAndTheRecordSaysWhat() throws {
        var control = ExchangeControl(policy: try policy(["|~u /api|latency=300ms down=750kbit up=250kbit"]))
        XCTAssertEqual(control.start(request()), .send(request()))
        XCTAssertEqual(control.effect, NetworkEffect(latency: .milliseconds(300), downBytesPerSecond: 750 * 128, upBytesPerSecond: 250 * 128))
        XCTAssertEqual(control.changes?.rules, ["condition |~u /api|latency=300ms down=750kbit up=250kbit"])
        XCTAssertEqual(control.changes?.condition,
                       AppliedCondition(rule: "condition |~u /api|latency=300ms down=750kbit up=250kbit", latencyMilliseconds: 300,
                                        downBitsPerSecond: 750 * 1024, upBitsPerSecond: 250 * 1024))
    }

    func testARequestTheFilterDoesNotMatchIsLeftAlone() throws {
        var control = ExchangeControl(policy: try policy(["|~u /api|latency=300ms"]))
        XCTAssertEqual(control.start(request("/static/a.css")), .send(request("/static/a.css")))
        XCTAssertEqual(control.effect, .none)
        XCTAssertNil(control.changes)
    }

    func testFailuresAreReturnedByStartAndAStatusIsAnEmptyAnswer() throws {
        var reset = ExchangeControl(policy: try policy(["||latency=50ms fail=100%:reset"]))
        // A draw just under 1 still fails a 100% share.
        let late = ExchangeControl.StartInputs(draw: { _ in 0.999 })
        XCTAssertEqual(reset.start(request(), inputs: late), .fail(.reset))
        XCTAssertEqual(reset.effect.latency, .milliseconds(50), "the failure comes after the latency")
        XCTAssertEqual(reset.changes?.condition?.failure, "reset")
        var timeout = ExchangeControl(policy: try policy(["||fail=100%:timeout"]))
        XCTAssertEqual(timeout.start(request(), inputs: late), .fail(.timeout))
        var offline = ExchangeControl(policy: try policy(["||offline"]))
        XCTAssertEqual(offline.start(request(), inputs: late), .fail(.offline))
        var status = ExchangeControl(policy: try policy(["||fail=100%:503"]))
        XCTAssertEqual(status.start(request(), inputs: late),
                       .answer(ExchangeResponse(statusCode: 503, headers: [HTTPHeader(name: "Content-Length", value: "0")], body: Data())))
        XCTAssertEqual(status.changes?.condition?.failure, "503")
    }

    func testAMapLocalAnswerWaitsForTheLatencyToo() throws {
        var local = try TrafficRule(.mapLocal, spec: "|/api|/srv/a.json")
        local.files = [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data("{}".utf8))]
        let rules = RuleSet(compiling: [local, try TrafficRule(.condition, spec: "||latency=250ms")])
        var control = ExchangeControl(policy: ExchangeControl.Policy(rules: rules, breakpoints: nil, redactionMarker: "", holdLimit: 0))
        guard case .answer = control.start(request()) else { return XCTFail("map local answers") }
        XCTAssertEqual(control.effect.latency, .milliseconds(250))
        XCTAssertEqual(control.changes?.mockedFrom, "/srv/a.json")
        XCTAssertEqual(control.changes?.condition?.latencyMilliseconds, 250)
    }

    func testTheSameSeedGivesTheSameFailuresInTheSameOrder() throws {
        func run() throws -> [Bool] {
            let policy = try policy(["||fail=50%:reset seed=42"])
            return (0..<64).map { _ in
                var control = ExchangeControl(policy: policy)
                return control.start(request(), inputs: generators) == .fail(.reset)
            }
        }
        let first = try run()
        XCTAssertEqual(try run(), first)
        XCTAssertTrue(first.contains(true) && first.contains(false), "some fail, some pass: \(first)")
        let other = ConditionDraws(seed: 43)
        XCTAssertNotEqual((0..<64).map { _ in other.next() < 0.5 }, first, "another seed, other failures")
    }

    func testAFailureShareFailsAboutThatShare() throws {
        let policy = try policy(["||fail=5%:reset seed=1"])
        let failed = (0..<10_000).count { _ in
            var control = ExchangeControl(policy: policy)
            return control.start(request(), inputs: generators) == .fail(.reset)
        }
        XCTAssertTrue((350...650).contains(failed), "\(failed) of 10,000")
    }

    func testAPacedBodyIsDueWhenTheBandwidthWouldHaveCarriedIt() {
        var pacer = Pacer(bytesPerSecond: 1 << 20)
        let start = ContinuousClock.now
        var due = start
        var sent = 0
        while sent < 1 << 20 {
            let slice = min(pacer.sliceSize, (1 << 20) - sent)
            due = pacer.due(afterSending: slice, now: start)
            sent += slice
        }
        XCTAssertEqual(start.duration(to: due), .seconds(1), "a mebibyte at a mebibyte a second: one second from the first byte")
    }
}
