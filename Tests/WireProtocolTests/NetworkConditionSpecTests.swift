import Foundation
import WireProtocol
import XCTest

/// A condition's text: presets with Firefox DevTools' figures, key=value
/// pairs, and errors that name the part they could not read.
final class NetworkConditionSpecTests: XCTestCase {
    func testPairsReadAsLatencyBandwidthFailureAndSeed() throws {
        let condition = try NetworkCondition(spec: "latency=300ms, down=750kbit up=250kbit,fail=5%:reset seed=42")
        XCTAssertEqual(condition.latency, .milliseconds(300))
        XCTAssertEqual(condition.downBitsPerSecond, 750 * 1024)
        XCTAssertEqual(condition.upBitsPerSecond, 250 * 1024)
        XCTAssertEqual(condition.failure, NetworkCondition.Failure(share: 0.05, kind: .reset))
        XCTAssertEqual(condition.seed, 42)
    }

    func testUnitsAndFailureKinds() throws {
        XCTAssertEqual(try NetworkCondition(spec: "latency=1.5s").latency, .milliseconds(1500))
        XCTAssertEqual(try NetworkCondition(spec: "latency=20").latency, .milliseconds(20))
        XCTAssertEqual(try NetworkCondition(spec: "down=8mbit").downBitsPerSecond, 8 * 1024 * 1024)
        XCTAssertEqual(try NetworkCondition(spec: "down=2Mbps").downBitsPerSecond, 2 * 1024 * 1024)
        XCTAssertEqual(try NetworkCondition(spec: "fail=100%:timeout").failure?.kind, .timeout)
        XCTAssertEqual(try NetworkCondition(spec: "fail=10%:503").failure, NetworkCondition.Failure(share: 0.1, kind: .status(503)))
    }

    func testPresetsCarryFirefoxsFiguresAndPairsAfterOneChangeIt() throws {
        let threeG = try NetworkCondition(spec: "3g")
        XCTAssertEqual(threeG, NetworkCondition(latency: .milliseconds(100), downBitsPerSecond: 750 * 1024, upBitsPerSecond: 250 * 1024))
        XCTAssertEqual(try NetworkCondition(spec: "good-3g").downBitsPerSecond, 1536 * 1024)
        XCTAssertEqual(try NetworkCondition(spec: "offline").failure, NetworkCondition.Failure(share: 1, kind: .offline))
        let changed = try NetworkCondition(spec: "3g latency=1s")
        XCTAssertEqual(changed.latency, .seconds(1))
        XCTAssertEqual(changed.downBitsPerSecond, 750 * 1024)
        for preset in NetworkCondition.presets {
            XCTAssertNoThrow(try NetworkCondition(spec: preset.name), preset.name)
        }
    }

    func testBadTextNamesTheBadPartAndGivesAnExample() {
        func message(_ spec: String) -> String {
            do {
                _ = try NetworkCondition(spec: spec)
                return "no error"
            } catch {
                return error.description
            }
        }
        XCTAssertTrue(message("latency=soon").contains("latency='soon' is not a duration; e.g. latency=300ms"), message("latency=soon"))
        XCTAssertTrue(message("down=fast").contains("down='fast'"), message("down=fast"))
        XCTAssertTrue(message("fail=5").contains("fail='5'") && message("fail=5").contains("5%:reset"), message("fail=5"))
        XCTAssertTrue(message("fail=5%:explode").contains("fail='5%:explode'"), message("fail=5%:explode"))
        XCTAssertTrue(message("jitter=3ms").contains("unknown key 'jitter'"), message("jitter=3ms"))
        XCTAssertTrue(message("5g").contains("'5g' is neither key=value nor a preset") && message("5g").contains("good-3g"), message("5g"))
        XCTAssertTrue(message("latency=1s 3g").contains("a preset comes first"), message("latency=1s 3g"))
        XCTAssertTrue(message("").contains("empty"), message(""))
    }

    func testAConditionReadsBackFromItsSpec() throws {
        for text in ["latency=300ms", "down=750kbit up=3mbit", "fail=5%:reset seed=7", "fail=12.5%:503", "latency=2ms down=30mbit up=15mbit"] {
            let condition = try NetworkCondition(spec: text)
            XCTAssertEqual(condition.spec, text)
            XCTAssertEqual(try NetworkCondition(spec: condition.spec), condition)
        }
    }

    func testAConditionRuleIsAFilterAndASpecInMitmproxysSeparatorSyntax() throws {
        let rule = try TrafficRule(.condition, spec: "|~d api|latency=300ms")
        XCTAssertEqual(rule.filter, "~d api")
        XCTAssertEqual(rule.pattern, "latency=300ms")
        XCTAssertEqual(rule.description, "condition |~d api|latency=300ms")
        let everyFlow = try TrafficRule(.condition, spec: "||3g")
        XCTAssertNil(everyFlow.filter, "an empty filter matches every flow")
        XCTAssertEqual(everyFlow.spec, "||3g")
        XCTAssertEqual(try TrafficRule(.condition, spec: everyFlow.spec), everyFlow)
        XCTAssertEqual(try TrafficRule(.condition, spec: rule.spec), rule)
    }

    func testABadConditionRuleNamesTheRuleAndThePart() {
        XCTAssertThrowsError(try TrafficRule(.condition, spec: "|~d api|latency=300|x")) { error in
            XCTAssertTrue("\(error)".contains("expected '|FILTER|SPEC'"), "\(error)")
        }
        XCTAssertThrowsError(try TrafficRule(.condition, spec: "|~d api|down=lots")) { error in
            XCTAssertTrue("\(error)".contains("condition '|~d api|down=lots': down='lots'"), "\(error)")
        }
    }

    func testWhatAConditionDidReadsForPeople() {
        let applied = AppliedCondition(rule: "condition ||3g", latencyMilliseconds: 300, downBitsPerSecond: 750 * 1024,
                                       upBitsPerSecond: 250 * 1024)
        XCTAssertEqual(applied.summary, "+300 ms, paced to 750 kbit/s down, 250 kbit/s up")
        XCTAssertEqual(AppliedCondition(rule: "r", failure: "reset").summary, "failed by a condition: reset")
    }

    func testWhatAConditionDidTravelsInTheFlowsChanges() throws {
        let applied = AppliedCondition(rule: "condition ||latency=300ms", latencyMilliseconds: 300, failure: "reset")
        let log = NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1/x", headers: []), timing: Timing(startedAt: Date()),
                             changes: FlowChanges(rules: ["condition ||latency=300ms"], condition: applied))
        let line = log.jsonLine()
        XCTAssertTrue(String(decoding: line, as: UTF8.self).contains(#""condition":{"rule":"condition ||latency=300ms","latencyMilliseconds":300,"failure":"reset"}"#))
        XCTAssertEqual(try NetworkLog(jsonLine: line).changes?.condition, applied)
    }
}
