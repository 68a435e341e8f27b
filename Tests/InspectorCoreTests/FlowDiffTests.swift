import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

final class FlowDiffTests: XCTestCase {
    private func flow(_ number: Int, method: String = "GET", url: String = "http://127.0.0.1:8080/a?x=1&y=2",
                      headers: [HTTPHeader] = [], body: String? = nil, status: Int = 200, responseBody: String = "",
                      contentType: String = "application/json", duration: Double = 0.1) -> NetworkLog {
        var log = Fixtures.started(number, method: method, url: url, headers: headers, body: body.map { CapturedBody(data: Data($0.utf8)) })
        log.apply(Fixtures.finished(number, status: status, body: responseBody, contentType: contentType, duration: duration))
        return log
    }

    private func section(_ diff: FlowDiff, _ prefix: String) -> FlowDiff.Section? {
        diff.sections.first { $0.title.hasPrefix(prefix) }
    }

    func testIdenticalFlowsHaveNoDifferencesButTiming() {
        let diff = FlowDiff(base: flow(1, responseBody: "{}"), other: flow(2, responseBody: "{}"))
        XCTAssertEqual(diff.differenceCount, 0, "\(diff.sections)")
    }

    func testRequestLineAndQueryParameters() {
        let diff = FlowDiff(base: flow(1), other: flow(2, method: "POST", url: "http://127.0.0.1:9090/b?x=1&z=3"))
        let rows = section(diff, "Request")!.rows
        XCTAssertTrue(rows.contains(FlowDiff.Row(kind: .changed, label: "method", base: "GET", other: "POST")))
        XCTAssertTrue(rows.contains(FlowDiff.Row(kind: .changed, label: "scheme://host:port", base: "http://127.0.0.1:8080", other: "http://127.0.0.1:9090")))
        XCTAssertTrue(rows.contains(FlowDiff.Row(kind: .changed, label: "path", base: "/a", other: "/b")))
        XCTAssertTrue(rows.contains(FlowDiff.Row(kind: .removed, label: "?y", base: "2", other: nil)))
        XCTAssertTrue(rows.contains(FlowDiff.Row(kind: .added, label: "?z", base: nil, other: "3")))
        XCTAssertFalse(rows.contains { $0.label == "?x" }, "x=1 is the same in both")
    }

    func testHeadersAddedRemovedChangedCaseInsensitively() {
        let base = flow(1, headers: [HTTPHeader(name: "Authorization", value: "Bearer a"), HTTPHeader(name: "X-Old", value: "1"),
                                     HTTPHeader(name: "Accept", value: "*/*")])
        let other = flow(2, headers: [HTTPHeader(name: "authorization", value: "Bearer b"), HTTPHeader(name: "accept", value: "*/*"),
                                      HTTPHeader(name: "X-New", value: "2")])
        let rows = section(FlowDiff(base: base, other: other), "Request headers")!.rows
        XCTAssertEqual(rows, [
            FlowDiff.Row(kind: .changed, label: "Authorization", base: "Bearer a", other: "Bearer b"),
            FlowDiff.Row(kind: .removed, label: "X-Old", base: "1", other: nil),
            FlowDiff.Row(kind: .added, label: "X-New", base: nil, other: "2"),
            FlowDiff.Row(kind: .note, label: "1 more the same", base: nil, other: nil),
        ])
    }

    func testJSONBodiesAreComparedPathByPathWhateverTheKeyOrder() {
        let base = flow(1, responseBody: #"{"id":1,"user":{"name":"Zoë","roles":["a","b"]},"price":12.5,"gone":true}"#)
        let other = flow(2, responseBody: #"{"user":{"roles":["a","c","d"],"name":"Zoë"},"id":1,"price":13,"new":null}"#)
        let body = section(FlowDiff(base: base, other: other), "Response body")!
        XCTAssertEqual(body.title, "Response body (JSON, by path)")
        XCTAssertEqual(body.rows, [
            FlowDiff.Row(kind: .changed, label: "$.user.roles[1]", base: "\"b\"", other: "\"c\""),
            FlowDiff.Row(kind: .added, label: "$.user.roles[2]", base: nil, other: "\"d\""),
            FlowDiff.Row(kind: .changed, label: "$.price", base: "12.5", other: "13"),
            FlowDiff.Row(kind: .removed, label: "$.gone", base: "true", other: nil),
            FlowDiff.Row(kind: .added, label: "$.new", base: nil, other: "null"),
        ])
    }

    func testJSONTypeChangesAndOddKeys() {
        let base = flow(1, responseBody: #"{"a b":[1],"n":1}"#)
        let other = flow(2, responseBody: #"{"a b":{"k":1},"n":"1"}"#)
        let rows = section(FlowDiff(base: base, other: other), "Response body")!.rows
        XCTAssertEqual(rows, [
            FlowDiff.Row(kind: .changed, label: #"$["a b"]"#, base: "[… 1 items]", other: "{… 1 keys}"),
            FlowDiff.Row(kind: .changed, label: "$.n", base: "1", other: "\"1\""),
        ])
    }

    func testTextBodiesLineByLine() {
        let base = flow(1, responseBody: "one\ntwo\nthree\nfour", contentType: "text/plain")
        let other = flow(2, responseBody: "one\n2\nthree\nfour\nfive", contentType: "text/plain")
        let body = section(FlowDiff(base: base, other: other), "Response body")!
        XCTAssertEqual(body.title, "Response body (text, by line)")
        XCTAssertEqual(body.rows, [
            FlowDiff.Row(kind: .removed, label: "line 2", base: "two", other: nil),
            FlowDiff.Row(kind: .added, label: "line 2", base: nil, other: "2"),
            FlowDiff.Row(kind: .note, label: "… 2 lines the same", base: nil, other: nil),
            FlowDiff.Row(kind: .added, label: "line 5", base: nil, other: "five"),
        ])
    }

    func testTextDiffIsAShortestEditScript() {
        let left = Array("ABCABBA")
        let right = Array("CBABAC")
        let edits = try! XCTUnwrap(TextDiff.edits(left, right))
        XCTAssertEqual(edits.filter { if case .same = $0 { false } else { true } }.count, 5, "Myers' example: D = 5")
        var rebuilt: [Character] = []
        for edit in edits {
            switch edit {
            case .same(let index, _): rebuilt.append(left[index])
            case .added(let index): rebuilt.append(right[index])
            case .removed: break
            }
        }
        XCTAssertEqual(rebuilt, right)
    }

    func testBinaryBodiesBySizeAndFirstDifference() {
        var base = flow(1)
        var other = flow(2)
        base.response?.body = CapturedBody(data: Data([0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 3]))
        base.response?.mimeType = "image/png"
        other.response?.body = CapturedBody(data: Data([0x89, 0x50, 0x4E, 0x47, 0, 9, 2, 3, 4]))
        other.response?.mimeType = "image/png"
        let rows = section(FlowDiff(base: base, other: other), "Response body")!.rows
        XCTAssertEqual(rows, [
            FlowDiff.Row(kind: .changed, label: "size", base: "8 bytes", other: "9 bytes"),
            FlowDiff.Row(kind: .changed, label: "first difference at 0x5 (5)", base: "01 02 03", other: "09 02 03 04"),
        ])
    }

    func testStatusErrorAndTiming() {
        var failed = Fixtures.started(2)
        failed.apply(Fixtures.failed(2))
        let diff = FlowDiff(base: flow(1, duration: 0.1), other: failed)
        let outcome = section(diff, "Response")!.rows
        XCTAssertEqual(outcome.first, FlowDiff.Row(kind: .changed, label: "status", base: "200 OK", other: "no response (failed)"))
        XCTAssertTrue(outcome.contains { $0.kind == .added && $0.label == "error" && $0.other?.contains("timed out") == true })
        let duration = section(diff, "Timing")!.rows[0]
        XCTAssertEqual(duration, FlowDiff.Row(kind: .changed, label: "duration", base: "100.0 ms", other: "60.0 s  (+59.9 s)"))
    }

    func testDOpensTheDiffOfTheBaseAndTheSelection() {
        var state = Fixtures.mixedState()
        state.press("+")
        XCTAssertEqual(state.mode, .list)
        XCTAssertEqual(state.notice?.isError, true, "no base yet")
        state.press("g", "=", "j", "+")
        XCTAssertEqual(state.mode, .diff(DiffState(base: 0, other: 1)))
        let screen = Renderer.render(state, size: .minimum).text
        XCTAssertTrue(screen.contains("~ status"), screen)
        state.press("q")
        XCTAssertEqual(state.mode, .list)
    }

    func testWithoutABaseTheNewestMarkIsUsed() {
        var state = Fixtures.mixedState()
        state.press("g", "m", "j", "j", "+")
        XCTAssertEqual(state.mode, .diff(DiffState(base: 0, other: 2)))
    }

    func testDiffDrawsAnAddedHeaderUnderOther() {
        let base = Fixtures.started(1, headers: [HTTPHeader(name: "Accept", value: "text/html")])
        let other = Fixtures.started(2, headers: [HTTPHeader(name: "Accept", value: "application/json"), HTTPHeader(name: "X-Added", value: "yes")])
        let lines = FlowDiff(base: base, other: other).lines(width: 100).map(\.text)
        let heading = lines.firstIndex { $0.contains("Request headers") }!
        let columns = lines[(heading + 1)...].first { $0.contains("base") && $0.contains("other") }!
        let added = lines[(heading + 1)...].first { $0.hasPrefix("+ X-Added") }!
        let otherColumn = columns.distance(from: columns.startIndex, to: columns.range(of: "other")!.lowerBound)
        let valueColumn = added.distance(from: added.startIndex, to: added.range(of: "yes")!.lowerBound)
        XCTAssertEqual(valueColumn, otherColumn, "\(columns)\n\(added)")
    }
}
