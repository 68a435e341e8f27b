import FlowFilter
import Foundation
import TestSupport
import WireProtocol
import XCTest
@testable import InspectorCore

/// The insights of a fixed set of flows, against figures worked out by
/// hand: routes folded, nearest-rank percentiles, error rates (5xx and
/// failures, not 4xx), impact, bytes and the histogram; and each group's
/// filter selects exactly its flows.
final class InsightsFiguresTests: XCTestCase {
    private func insights() -> Insights {
        var insights = Insights()
        for (index, flow) in Fixtures.insightsFlows().enumerated() { insights.add(flow, service: index < 12 ? "users" : "blobs") }
        insights.settle()
        return insights
    }

    func testRoutesFoldNumbersUUIDsAndHashesAndKeepTheRest() {
        XCTAssertEqual(RouteFolding.route(ofURL: "https://h/users/42/orders?page=2"), "/users/{id}/orders")
        XCTAssertEqual(RouteFolding.route(ofURL: "https://h/users/\(Fixtures.insightsUUIDs[1])"), "/users/{uuid}")
        XCTAssertEqual(RouteFolding.route(ofURL: "https://h/git/0123456789abcdef0123/tree"), "/git/{hash}/tree")
        // Too short for a hash, or not hex: kept as written.
        XCTAssertEqual(RouteFolding.route(ofURL: "https://h/v1/deadbeef/x1y2/ping"), "/v1/deadbeef/x1y2/ping")
        XCTAssertEqual(RouteFolding.route(ofURL: "https://h"), "/")
        let names = insights().rows(.route, by: .name).map(\.name)
        XCTAssertEqual(names, ["GET api.example.com/users/{id}", "GET api.example.com/users/{uuid}/avatar",
                               "GET other.example.org/v1/deadbeef/ping", "POST api.example.com/blobs/{hash}"])
    }

    func testEachGroupsFiguresAreTheHandComputedOnes() throws {
        let routes = insights().rows(.route, by: .impact)
        // Impact: 60 s for the ping, 2 s for the POST, 0.6 s of avatars, 0.55 s of users.
        XCTAssertEqual(routes.map(\.name.first), ["G", "P", "G", "G"])
        let users = try XCTUnwrap(routes.first { $0.name.hasSuffix("{id}") })
        XCTAssertEqual(users.count, 10)
        XCTAssertEqual(users.errors, 1)
        XCTAssertEqual(users.errorRate, 0.1, accuracy: 1e-12)
        // Nearest rank of 10: p50 is the 5th (50 ms), p95 and p99 the 10th.
        XCTAssertEqual(try XCTUnwrap(users.percentile(50)), 0.05, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(users.percentile(95)), 0.10, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(users.percentile(99)), 0.10, accuracy: 1e-12)
        XCTAssertEqual(users.impact, 0.55, accuracy: 1e-9)
        XCTAssertEqual(users.bytesReceived, 50)
        // Buckets: 10-20 ms in <30ms, 30-90 ms in <100ms, 100 ms in <300ms.
        XCTAssertEqual(users.histogram, [0, 0, 0, 2, 7, 1, 0, 0, 0])
        XCTAssertEqual(InsightsTable.histogram(users), "   ▃█▂   ")

        let avatars = try XCTUnwrap(routes.first { $0.name.hasSuffix("avatar") })
        XCTAssertEqual(avatars.errors, 0, "a 404 is not an error")
        XCTAssertEqual(try XCTUnwrap(avatars.percentile(50)), 0.2, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(avatars.percentile(95)), 0.4, accuracy: 1e-12)

        let post = try XCTUnwrap(routes.first { $0.name.hasPrefix("POST") })
        XCTAssertEqual(post.bytesSent, 1000)
        let ping = try XCTUnwrap(routes.first { $0.name.hasSuffix("ping") })
        XCTAssertEqual(ping.errorRate, 1, "a failed flow is an error")

        let hosts = insights().rows(.host, by: .count)
        XCTAssertEqual(hosts.map(\.name), ["api.example.com", "other.example.org"])
        XCTAssertEqual(hosts.map(\.count), [13, 1])
        XCTAssertEqual(insights().rows(.service, by: .name).map(\.name), ["blobs", "users"])
        XCTAssertEqual(insights().total.count, 14)
    }

    func testEachGroupsFilterSelectsExactlyItsFlows() throws {
        let flows = Fixtures.insightsFlows()
        for dimension in [Insights.Dimension.route, .host] {
            for group in insights().rows(dimension, by: .name) {
                let filter = try FilterExpression.parse(group.filter)
                XCTAssertEqual(flows.filter { filter.matches($0) }.count, group.count, "\(group.name): \(group.filter)")
            }
        }
    }

    func testFlowsArrivingInBatchesGiveTheSameFiguresAsOneBatch() {
        var batched = Insights()
        for (index, flow) in Fixtures.insightsFlows().reversed().enumerated() {
            batched.add(flow, service: nil)
            if index % 3 == 0 { batched.settle() }
        }
        batched.settle()
        let whole = insights()
        for (left, right) in zip(batched.rows(.route, by: .name), whole.rows(.route, by: .name)) {
            XCTAssertEqual(left.durations.sorted, right.durations.sorted, left.name)
            XCTAssertEqual(left.count, right.count)
        }
    }

    func testTheSummaryTableShowsTheFigures() {
        let text = InsightsTable.text(insights(), width: 120).joined(separator: "\n")
        let users = text.split(separator: "\n").first { $0.hasPrefix("GET api.example.com/users/{id}") }
        XCTAssertNotNil(users, text)
        // COUNT ERR% P50 P95 P99 SENT RECV IMPACT HISTOGRAM
        XCTAssertEqual(users?.split(separator: " ").dropFirst(2).prefix(11).joined(separator: " "),
                       "10 10.0 50ms 100ms 100ms 0 B 50 B 550ms ▃█▂", text)
        XCTAssertTrue(text.contains("by host:") && text.contains("by service:"), text)
    }
}
