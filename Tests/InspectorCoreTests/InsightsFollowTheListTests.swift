import FlowFilter
import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// Insights count what the list holds: `z` clears both, and the ids real
/// APIs put in paths fold into one route.
final class InsightsFollowTheListTests: XCTestCase {
    func testClearingTheListClearsTheInsightsAndTheirPercentiles() throws {
        var state = Fixtures.mixedState(size: Fixtures.wide)
        XCTAssertEqual(state.insights.total.count, 5, "the mix's finished flows")
        state.press("z", "y")
        XCTAssertEqual(state.session.store.count, 0)
        XCTAssertEqual(state.insights.total.count, 0, "z clears the insights with the list")
        XCTAssertNil(state.insights.total.percentile(95), "no p95 of cleared flows")

        let later: [Message] = [.flowStarted(Fixtures.started(20, url: "https://api.example.com/v1/after")),
                                .flowFinished(Fixtures.finished(20, duration: 0.5))]
        _ = Reducer.reduce(&state, .inbox(later.map { .message(ConnectionID(1), $0) }, at: Fixtures.epoch.addingTimeInterval(30)))
        XCTAssertEqual(state.insights.rows(.route, by: .name).map(\.name), ["GET api.example.com/v1/after"])
        XCTAssertEqual(try XCTUnwrap(state.insights.total.percentile(95)), 0.5, accuracy: 1e-9)
        state.press("s")
        let screen = state.screen()
        XCTAssertFalse(screen.contains("/v1/items"), "the cleared flows' routes are gone:\n\(screen)")
    }

    func testTypedIDsAndBase62KeysFoldAndWordsStay() {
        let folded = [
            "https://h/api/orders/ord_52608": "/api/orders/{id}",
            "https://h/api/orders/ord_99": "/api/orders/ord_99",
            "https://h/users/usr-7f3a2/avatar": "/users/{id}/avatar",
            "https://h/v1/customers/cus_NffrFeUfNV2Hib": "/v1/customers/{id}",
            "https://h/v1/payment_intents/pi_3MtwBwLkdIwHu7ix28a3tqPa": "/v1/payment_intents/{id}",
            "https://h/watch/dQw4w9WgXcQ": "/watch/{key}",
            "https://h/s/aZ3kP9qL2mX7bQ": "/s/{key}",
            "https://h/api-v2/oauth2/OAuth2Callback": "/api-v2/oauth2/OAuth2Callback",
            "https://h/charset/utf-8/sha-256/x1y2": "/charset/utf-8/sha-256/x1y2",
            "https://h/user-profile/getUserById": "/user-profile/getUserById",
        ]
        for (url, route) in folded { XCTAssertEqual(RouteFolding.route(ofURL: url), route, url) }
    }

    func testEachFoldedRoutesFilterSelectsExactlyItsFlows() throws {
        let urls = ["https://h/api/orders/ord_52608", "https://h/api/orders/ord_17", "https://h/api/orders/ord_x",
                    "https://h/watch/dQw4w9WgXcQ", "https://h/watch/plainwords", "https://h/blobs/0123456789abcdefABCD"]
        var insights = Insights()
        let flows = urls.enumerated().map { index, url -> NetworkLog in
            var log = Fixtures.started(index + 1, url: url)
            log.apply(Fixtures.finished(index + 1))
            return log
        }
        for flow in flows { insights.add(flow, service: nil) }
        insights.settle()
        for group in insights.rows(.route, by: .name) {
            let filter = try FilterExpression.parse(group.filter)
            XCTAssertEqual(flows.filter { filter.matches($0) }.count, group.count, "\(group.name): \(group.filter)")
        }
    }
}
