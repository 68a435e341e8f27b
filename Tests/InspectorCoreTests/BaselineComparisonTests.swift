import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// What counts as a change between a run and its baseline
/// (``BaselineComparison``), flow by flow, where the end-to-end test
/// (BaselineEndToEndTests) cannot reach each rule.
final class BaselineComparisonTests: XCTestCase {
    private var next = 0

    /// A finished flow: `url`, answered with `status` and `body` after `duration` seconds.
    private func flow(_ url: String, method: String = "GET", status: Int? = 200, body: String = "{}", duration: Double = 0.001,
                      headers: [HTTPHeader] = [], inbound: Bool = false, parent: FlowID? = nil) -> NetworkLog {
        next += 1
        var timing = Timing(startedAt: Date(timeIntervalSince1970: Double(next)))
        timing.finished = duration
        let response = status.map { Response(statusCode: $0, headers: headers, body: CapturedBody(data: Data(body.utf8))) }
        var log = NetworkLog(request: Request(method: method, url: url), response: response, timing: timing,
                             state: status == nil ? .failed : .completed, direction: inbound ? .inbound : nil)
        log.parentID = parent
        return log
    }

    private func changes(_ before: [NetworkLog], _ now: [NetworkLog], options: RunProfile.Options = .init()) -> [String] {
        BaselineComparison.changes(from: RunProfile(flows: before, options: options), to: RunProfile(flows: now, options: RunProfile.Options(headers: options.headers)))
            .map { "\($0.kind.rawValue) \($0.route): \($0.detail)" }
    }

    func testTheSameTrafficOnAnotherLoopbackPortIsNoChange() {
        let before = (1...6).map { flow("http://127.0.0.1:50001/users/\($0)", body: #"{"id":\#($0)}"#) }
        let now = (1...3).map { flow("http://localhost:61234/users/\($0 + 10)", body: #"{"id":\#($0)}"#) }
            + (1...3).map { flow("http://[::1]:61235/users/\($0 + 20)", body: #"{"id":\#($0)}"#) }
        XCTAssertEqual(changes(before, now), [])
        XCTAssertEqual(changes(before, [flow("http://api.example.com:8080/users/1")]).sorted(), [
            "route-gone GET localhost/users/{id}: 6 flows before, none now",
            "route-new GET api.example.com:8080/users/{id}: 1 flow, none before",
        ], "another host is another route")
        XCTAssertEqual(changes([flow("http://staging.example.com/users/1")], [flow("http://api.example.com/users/1")],
                               options: RunProfile.Options(hostMapping: ["staging.example.com": "api.example.com"])), [],
                       "--baseline-host renames the baseline's host")
    }

    func testAnOptionalFieldIsNoChangeButARequiredOneGoneOrRetypedIs() {
        let before = [flow("http://x/a", body: #"{"id":1,"note":"n"}"#), flow("http://x/a", body: #"{"id":2}"#)]
        XCTAssertEqual(changes(before, [flow("http://x/a", body: #"{"id":3}"#)]), [], "note was optional")
        XCTAssertEqual(changes(before, [flow("http://x/a", body: #"{"id":"3"}"#)]),
                       ["shape GET x/a: response body: of another type /id (number → string)"])
        XCTAssertEqual(changes(before, [flow("http://x/a", body: #"{"ident":3}"#)]),
                       ["shape GET x/a: response body: removed /id (number); added /ident (number)"])
        XCTAssertEqual(changes([flow("http://x/a", body: #"{"id":1,"tags":["a"]}"#)], [flow("http://x/a", body: #"{"id":1,"tags":null}"#)]), [],
                       "null is not another type")
        XCTAssertEqual(changes([flow("http://x/a", body: #"{"user":{"id":1,"name":"a"}}"#)], [flow("http://x/a", body: #"{"id":1}"#)]),
                       ["shape GET x/a: response body: removed /user (object); added /id (number)"], "what is under a removed key is part of it")
    }

    func testANewStatusClassIsAChangeAndAnotherCodeOfTheSameClassIsNot() {
        let before = [flow("http://x/a"), flow("http://x/a", status: 201)]
        XCTAssertEqual(changes(before, [flow("http://x/a", status: 204)]), [])
        XCTAssertEqual(changes(before, [flow("http://x/a", status: 503), flow("http://x/a")]), ["status GET x/a: 1 5xx now, only 2xx before"])
        XCTAssertEqual(changes(before, [flow("http://x/a", status: nil)]), ["status GET x/a: 1 failed now, only 2xx before"])
    }

    func testLatencyNeedsTheRatioTheFloorAndEnoughFlows() {
        let before = (1...5).map { _ in flow("http://x/a", duration: 0.010) }
        XCTAssertEqual(changes(before, (1...5).map { _ in flow("http://x/a", duration: 0.025) }), [], "2.5 times, but 15 ms: under the 20 ms floor")
        XCTAssertEqual(changes(before, (1...4).map { _ in flow("http://x/a", duration: 0.5) }), [], "four flows are too few")
        XCTAssertEqual(changes(before, (1...5).map { _ in flow("http://x/a", duration: 0.5) }),
                       ["latency GET x/a: p50 10 ms → 500 ms, p95 10 ms → 500 ms (5 → 5 flows)"])
    }

    func testTheCallsEachReceivedRequestMakes() {
        func run(calls: Int, to path: String = "/items/1") -> [NetworkLog] {
            (1...3).flatMap { _ -> [NetworkLog] in
                let parent = flow("http://127.0.0.1:1/checkout", inbound: true)
                return [parent] + (0..<calls).map { _ in flow("http://inventory.svc\(path)", parent: parent.id) }
            }
        }
        XCTAssertEqual(changes(run(calls: 1), run(calls: 1)), [])
        XCTAssertEqual(changes(run(calls: 1), run(calls: 12)), ["fan-out ← GET localhost/checkout: 12 calls a request to GET inventory.svc/items/{id}, 1 before"])
        XCTAssertEqual(changes(run(calls: 2), run(calls: 3)), [], "one more, but not twice as many")
        XCTAssertEqual(changes(run(calls: 1), run(calls: 1, to: "/stock/1")), [
            "route-gone GET inventory.svc/items/{id}: 3 flows before, none now",
            "route-new GET inventory.svc/stock/{id}: 3 flows, none before",
            "fan-out ← GET localhost/checkout: calls GET inventory.svc/stock/{id} (1 a request), which it did not call before",
            "fan-out ← GET localhost/checkout: no longer calls GET inventory.svc/items/{id} (1 a request before)",
        ], "sorted by route, then kind")
    }

    func testANamedHeadersValuesAreCompared() {
        let cached = [HTTPHeader(name: "Cache-Control", value: "max-age=30")]
        let options = RunProfile.Options(headers: ["cache-control"])
        XCTAssertEqual(changes([flow("http://x/a", headers: cached)], [flow("http://x/a", headers: cached)], options: options), [])
        XCTAssertEqual(changes([flow("http://x/a", headers: cached)], [flow("http://x/a")], options: options),
                       ["header GET x/a: cache-control: 'max-age=30' → absent"])
        XCTAssertEqual(changes([flow("http://x/a", headers: cached)], [flow("http://x/a")]), [], "only the headers named")
    }

    func testFailOnChangeKinds() throws {
        XCTAssertEqual(try RunChange.kinds(parsing: "latency, fan-out"), [.latency, .fanOut])
        XCTAssertEqual(try RunChange.kinds(parsing: "all"), Set(RunChange.Kind.allCases))
        XCTAssertThrowsError(try RunChange.kinds(parsing: "slow")) { error in
            XCTAssertTrue("\(error)".contains("'slow' is not a change kind"), "\(error)")
        }
    }

    /// The insights view's changes tab comes after the last dimension only
    /// with a baseline, compares the flows in the store when shown, and
    /// Enter sets the list's filter to the flows behind the change.
    func testTheChangesTabInTheInsightsView() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        state.press("s")
        state.press("tab", "tab", "tab")
        guard case .insights(let plain) = state.mode else { return XCTFail("\(state.mode)") }
        XCTAssertFalse(plain.showsChanges, "no baseline, no changes tab")
        XCTAssertEqual(plain.dimension, .route)

        state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        state.baseline = BaselineView(name: "good.jsonl", profile: RunProfile(flows: [flow("http://x/a")]))
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(flow("http://x/b"))]), at: Fixtures.epoch))
        state.press("s")
        state.press("tab", "tab", "tab")
        guard case .insights(let view) = state.mode, view.showsChanges else { return XCTFail("\(state.mode)") }
        XCTAssertEqual(state.baseline?.changes.map(\.kind), [.routeGone, .routeNew])
        XCTAssertTrue(state.screen().contains("2 against good.jsonl, 1 flow as of this tab"), state.screen())
        state.press("enter")
        XCTAssertEqual(state.notice?.text, "The route is gone: this run has no flow of it to show")
        state.press("j", "enter")
        XCTAssertEqual(state.mode, .list)
        XCTAssertEqual(state.filterText, state.baseline?.changes[1].filter)
        state.press("s", "tab")
        guard case .insights(let back) = state.mode else { return XCTFail("\(state.mode)") }
        XCTAssertFalse(back.showsChanges, "tab goes round to the first dimension")
    }
}
