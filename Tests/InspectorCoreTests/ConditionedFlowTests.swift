import Foundation
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

@testable import InspectorCore

/// The `condition` kind in the rules view, and what a conditioned flow
/// shows and keeps (`--condition` itself: ConditionRuleTests in InspectorTUITests).
final class ConditionedFlowTests: XCTestCase {
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
