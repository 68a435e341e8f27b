import TestSupport
import WireProtocol
import XCTest
@testable import InspectorCore

/// A flow whose route or host name is written with characters beyond ASCII
/// joins the group of an ASCII flow whose name is the same string (a group
/// of ASCII flows is found from its name's bytes; this must not split it).
final class InsightsGroupsByNameAsStringsCompareTests: XCTestCase {
    func testAKelvinSignHostAndAPlainKHostAreOneRouteAndOneHost() {
        var insights = Insights()
        // U+212A KELVIN SIGN lowercases to "k": its name is "GET k.example/items/{id}".
        for (number, url) in ["https://\u{212A}.example/items/1", "https://k.example/items/2", "https://K.example/items/3",
                              "https://\u{212A}.example/items/4"].enumerated() {
            var log = Fixtures.started(number + 1, url: url)
            log.apply(Fixtures.finished(number + 1, status: 200, body: "", duration: 0.1))
            insights.add(log, service: "app")
        }
        insights.settle()
        XCTAssertEqual(insights.rows(.route, by: .name).map(\.name), ["GET k.example/items/{id}"])
        XCTAssertEqual(insights.rows(.route, by: .name).map(\.count), [4])
        XCTAssertEqual(insights.rows(.host, by: .name).map(\.name), ["k.example"])
        XCTAssertEqual(insights.rows(.host, by: .name).map(\.count), [4])
    }
}
