import Foundation
import InspectorIngest
import WireProtocol
import XCTest
@testable import InspectorCore
@testable import InspectorTUI

/// `--condition` and the `condition` kind of the rules file and view, and
/// what a conditioned flow shows.
final class ConditionRuleTests: XCTestCase {
    func testTheConditionFlagBecomesAListenersRule() throws {
        let command = try Netinspect.parse(["--condition", "|~d api|latency=300ms", "--condition", "||3g"])
        XCTAssertEqual(try command.listenerConfiguration(rules: OptionFiles(command).ruleBook).rules.map(\.description),
                       ["condition |~d api|latency=300ms", "condition ||3g"])
        XCTAssertTrue(command.asksForControl, "a wrapped command is told it may be controlled")
    }

    func testABadConditionStopsNetinspectNamingThePartAndAnExample() throws {
        XCTAssertThrowsError(try OptionFiles(Netinspect.parse(["--condition", "|~d api|latency=fast"]))) { error in
            let message = Netinspect.message(for: error)
            XCTAssertTrue(message.contains("latency='fast' is not a duration; e.g. latency=300ms"), message)
        }
        XCTAssertThrowsError(try OptionFiles(Netinspect.parse(["--condition", "|~zz|3g"]))) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("filter '~zz'"), Netinspect.message(for: error))
        }
        XCTAssertThrowsError(try Netinspect.parse(["--read", "x.har", "--condition", "||3g"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("cannot be combined with --read"), Netinspect.message(for: error))
        }
    }

    func testARulesFileTakesConditionLines() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("conditions-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("rules.txt").path
        try "condition |~d api|latency=300ms\n# off: condition ||offline\n".write(toFile: path, atomically: true, encoding: .utf8)
        let book = try RuleLoader.readBook(at: path)
        XCTAssertEqual(book.inForce.map(\.description), ["condition |~d api|latency=300ms"])
        XCTAssertEqual(book.entries.map(\.text), ["condition |~d api|latency=300ms", "condition ||offline"])
        XCTAssertEqual(try RuleLoader.parseLine("condition ||3g").kind, .condition)
    }

    func testTheRulesViewAddsAConditionAndRefusesABadOneWithItsTextKept() throws {
        var state = AppState(timeZone: Fixtures.utc, rules: RuleBook(path: "/tmp/rules.txt"))
        var controlled = Fixtures.hello(app: "controlled")
        controlled.acceptsControl = true
        _ = Reducer.reduce(&state, .inbox([.connected(ConnectionID(1), controlled, peer: "unix")], at: Fixtures.epoch))
        state.press("R")
        XCTAssertEqual(state.settle(state.enter("condition |~d api|3g fail=5%:reset", after: "a")), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.inForce.map(\.description), ["condition |~d api|3g fail=5%:reset"])
        let text = Renderer.render(state, size: Size(width: 100, height: 20)).text
        XCTAssertTrue(text.contains(" 1  on   condition       |~d api|3g fail=5%:reset"), text)

        XCTAssertEqual(state.settle(state.enter("condition ||latency=soon", after: "a")), .none)
        XCTAssertEqual(state.prompt?.text, "condition ||latency=soon")
        XCTAssertTrue(state.notice?.text.contains("latency='soon' is not a duration") == true, "\(String(describing: state.notice))")
    }

    func testAHARFileKeepsWhatAConditionDid() throws {
        var flow = HARCaptureFieldsTests.flow
        flow.changes = FlowChanges(rules: ["condition ||fail=5%:reset"],
                                   condition: AppliedCondition(rule: "condition ||fail=5%:reset", latencyMilliseconds: 20, downBitsPerSecond: 1024,
                                                               upBitsPerSecond: 2048, failure: "reset"))
        XCTAssertEqual(try HARFile.decode(HARFile.encode([flow])).first?.changes, flow.changes)
    }

    func testAConditionedFlowSaysWhatWasDoneAndIsMarkedInTheList() {
        var log = Fixtures.started(1, url: "http://127.0.0.1:8080/v1/slow")
        log.changes = FlowChanges(rules: ["condition |~u slow|latency=300ms down=750kbit"], condition: AppliedCondition(
            rule: "condition |~u slow|latency=300ms down=750kbit", latencyMilliseconds: 300, downBitsPerSecond: 750 * 1024))
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(log)]), at: Fixtures.epoch))
        let list = Renderer.render(state, size: Size(width: 120, height: 20)).text
        XCTAssertTrue(list.contains("∿ /v1/slow"), list)
        state.press("g", "enter")
        let text = Renderer.render(state, size: Size(width: 120, height: 30)).text
        XCTAssertTrue(text.contains("Condition +300 ms, paced to 750 kbit/s down, by the rule condition |~u slow|latency=300ms down=750kbit"), text)
    }
}
