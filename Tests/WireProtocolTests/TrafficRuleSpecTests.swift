import Foundation
import WireProtocol
import XCTest

/// A rule is shown as text that reads back as the same rule: the separator
/// is one no part contains.
final class TrafficRuleSpecTests: XCTestCase {
    func testARuleWhoseFilterHoldsASlashIsShownWithAnotherSeparator() throws {
        let typed = try TrafficRule(.modifyHeaders, spec: "|~u :8000/|X-Env|staging")
        XCTAssertEqual(typed.description, "modify-headers |~u :8000/|X-Env|staging")
        XCTAssertEqual(try TrafficRule(.modifyHeaders, spec: typed.spec), typed)
    }

    func testTheUsualSeparatorsAreKeptWhenNoPartHoldsThem() throws {
        XCTAssertEqual(try TrafficRule(.modifyHeaders, spec: "/~d example.com/X-Env/staging").spec, "/~d example.com/X-Env/staging")
        XCTAssertEqual(try TrafficRule(.mapRemote, spec: "/api.example.com/127.0.0.1:8080").spec, "|api.example.com|127.0.0.1:8080")
    }

    func testEveryRuleReadsBackFromItsSpec() throws {
        let rules = [
            TrafficRule(kind: .mapRemote, filter: "~m GET | ~u /a/b", pattern: "https://x/(.*)", replacement: "http://y/\\1"),
            TrafficRule(kind: .mapLocal, pattern: "/v2/|feature", replacement: "/tmp/a b/v2.json"),
            TrafficRule(kind: .modifyHeaders, filter: "~h 'a|b/c'", pattern: "X-A", replacement: ""),
        ]
        for rule in rules {
            XCTAssertEqual(try TrafficRule(rule.kind, spec: rule.spec), rule, rule.spec)
        }
    }
}
