import Foundation
import WireProtocol
import XCTest
@testable import InspectorCore
@testable import InspectorTUI

/// `--condition` and the `condition` kind of the rules file (the rules
/// view and a conditioned flow: ConditionedFlowTests in InspectorCoreTests).
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
}
