import Foundation
import XCTest
@testable import CaptureAgent

/// docs/AGENT.md's table of powers by client says what the code declares.
final class ControlPowersTests: XCTestCase {
    func testTheTableInAgentDocsAgreesWithTheDeclaredPowers() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/AGENT.md")
        let rows = try String(contentsOf: docs, encoding: .utf8).split(separator: "\n")
            .drop { !$0.hasPrefix("| power |") }
            .prefix { $0.hasPrefix("|") }
            .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        let header = try XCTUnwrap(rows.first, "docs/AGENT.md has a table that starts '| power |'")
        XCTAssertEqual(Array(header.dropFirst()), CaptureClient.allCases.map(\.rawValue), "one column per client, in order")
        let body = rows.dropFirst(2)
        XCTAssertEqual(body.map(\.first), ControlPower.allCases.map(\.rawValue), "one row per power, in order")
        for row in body {
            let power = try XCTUnwrap(ControlPower(rawValue: row[0]))
            for (client, cell) in zip(CaptureClient.allCases, row.dropFirst()) {
                XCTAssertEqual(cell, client.can(power) ? "yes" : "no", "\(power.rawValue) for \(client.rawValue)")
            }
        }
    }

    func testEveryLimitationSaysWhy() {
        for client in CaptureClient.allCases {
            for power in ControlPower.allCases where !client.can(power) {
                XCTAssertGreaterThan(client.limitation(power)?.count ?? 0, 20, "\(client) \(power)")
            }
        }
    }
}
