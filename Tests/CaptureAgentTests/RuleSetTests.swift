import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

final class RuleSetTests: XCTestCase {
    private func rules(_ specs: [(TrafficRule.Kind, String)]) throws -> RuleSet {
        RuleSet(compiling: try specs.map { try TrafficRule($0.0, spec: $0.1) })
    }

    private func request(_ url: String, method: String = "GET") -> ExchangeRequest {
        ExchangeRequest(method: method, url: URL(string: url)!, headers: [])
    }

    func testPythonStyleGroupsWorkInReplacements() throws {
        let set = try rules([(.mapRemote, #"|https://api\.example\.com/v(\d)/(.*)|http://127.0.0.1:9/\2?version=\1&cost=$5"#)])
        guard case .send(let sent, let changes) = set.apply(to: request("https://api.example.com/v2/items")) else { return XCTFail("no match") }
        XCTAssertEqual(sent.url.absoluteString, "http://127.0.0.1:9/items?version=2&cost=$5")
        XCTAssertEqual(changes.originalURL, "https://api.example.com/v2/items")
    }

    func testTheFilterDecides() throws {
        let set = try rules([(.mapRemote, "|~m POST|example.com|example.org")])
        guard case .unchanged = set.apply(to: request("http://example.com/a")) else { return XCTFail("a GET is not a POST") }
        guard case .send(let sent, _) = set.apply(to: request("http://example.com/a", method: "POST")) else { return XCTFail("no match") }
        XCTAssertEqual(sent.url.host, "example.org")
    }

    func testRulesApplyInOrderAndMapLocalEndsThem() throws {
        var local = try TrafficRule(.mapLocal, spec: "|example.org/data|/fixtures")
        local.files = [TrafficRule.LocalFile(path: "x.json", contentType: "application/json", data: Data("[1]".utf8))]
        let set = RuleSet(compiling: [try TrafficRule(.mapRemote, spec: "|example.com|example.org"), local,
                                      try TrafficRule(.modifyHeaders, spec: "/X-Never/1")])
        guard case .answer(let response, let mapped, let changes) = set.apply(to: request("http://example.com/data/x.json?q=1")) else {
            return XCTFail("the mapped URL goes on to the map-local rule")
        }
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.headers.first("Content-Type"), "application/json")
        XCTAssertEqual(response.body, Data("[1]".utf8))
        XCTAssertEqual(mapped.url.host, "example.org")
        XCTAssertEqual(changes.rules.count, 2)
        XCTAssertEqual(changes.mockedFrom, "/fixtures")
    }

    func testAMissingLocalFileIsA404ThatSaysWhere() throws {
        var local = try TrafficRule(.mapLocal, spec: "|/static|/srv/static")
        local.files = [TrafficRule.LocalFile(path: "index.html", contentType: "text/html", data: Data("<p>".utf8))]
        XCTAssertEqual(RuleSet.localAnswer(local, rest: "/").body, Data("<p>".utf8), "a directory's index")
        let missing = RuleSet.localAnswer(local, rest: "/a%20b.css?x=1")
        XCTAssertEqual(missing.status, 404)
        XCTAssertTrue(String(decoding: missing.body, as: UTF8.self).contains("'a b.css' under /srv/static"))
    }

    func testRulesThatDoNotCompileAreLeftOut() {
        let set = RuleSet(compiling: [TrafficRule(kind: .mapRemote, pattern: "(", replacement: "x"),
                                      TrafficRule(kind: .mapRemote, filter: "~q ~", pattern: "a", replacement: "b"),
                                      TrafficRule(kind: .modifyHeaders, pattern: "X-A", replacement: "1")])
        XCTAssertEqual(set.count, 1)
    }

    func testAHeaderRuleReplacesEveryFieldOfItsNameAndAnEmptyValueRemovesIt() throws {
        let set = try rules([(.modifyHeaders, "/x-token/new"), (.modifyHeaders, "/Accept/")])
        var original = request("http://example.com/")
        original.headers = [HTTPHeader(name: "Accept", value: "*/*"), HTTPHeader(name: "X-Token", value: "a"),
                            HTTPHeader(name: "x-token", value: "b")]
        guard case .send(let sent, let changes) = set.apply(to: original) else { return XCTFail("no match") }
        XCTAssertEqual(sent.headers, [HTTPHeader(name: "X-Token", value: "new")])
        XCTAssertEqual(changes.originalHeaders, original.sortedHeaders)
        XCTAssertNil(changes.originalURL)
    }

    func testDirectionTermsReadWhichWayTheRequestGoes() throws {
        let set = try rules([(.modifyHeaders, "/~inbound/X-In/1"), (.modifyHeaders, "/~outbound/X-Out/1"),
                             (.modifyHeaders, "/!~outbound/X-Not-Out/1")])
        var received = request("http://127.0.0.1:8080/v2/feature")
        received.direction = .inbound
        guard case .send(let handled, _) = set.apply(to: received) else { return XCTFail("a received request matches ~inbound") }
        XCTAssertEqual(handled.headers, [HTTPHeader(name: "X-In", value: "1"), HTTPHeader(name: "X-Not-Out", value: "1")])
        XCTAssertEqual(handled.direction, .inbound, "the changed request still says which way it goes")
        guard case .send(let sent, _) = set.apply(to: request("http://127.0.0.1:8080/v2/feature")) else { return XCTFail("a call matches ~outbound") }
        XCTAssertEqual(sent.headers, [HTTPHeader(name: "X-Out", value: "1")])
    }

    func testNoRulesLeaveTheRequestAlone() {
        guard case .unchanged = RuleSet.empty.apply(to: request("http://example.com/")) else { return XCTFail() }
    }
}
