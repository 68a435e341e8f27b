import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// The UI core at 100,000 flows gives correct results. How fast it is, and
/// how much memory a flow costs, is measured by `netinspect-bench` (section
/// 4), not here: timings in tests fail on busy machines and prove little.
final class ScaleTests: XCTestCase {
    private static let flowCount = 100_000

    private static func bigState() -> AppState {
        var state = AppState(size: Size(width: 200, height: 60), timeZone: Fixtures.utc)
        var messages: [Message] = []
        messages.reserveCapacity(flowCount * 2)
        let statuses = [200, 201, 204, 301, 404, 500, 503]
        for number in 0..<flowCount {
            messages.append(.flowStarted(Fixtures.started(number, url: "https://host\(number % 50).example.com/v1/items/\(number)?q=\(number % 7)")))
            if number % 10 != 0 {
                messages.append(.flowFinished(Fixtures.finished(
                    number, status: statuses[number % statuses.count], body: "", duration: Double((number * 7919) % 5000) / 1000
                )))
            }
        }
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        return state
    }

    func testRenderFilterAndSortAtOneHundredThousandFlows() throws {
        var state = Self.bigState()
        XCTAssertEqual(state.rows.count, Self.flowCount)

        let screen = Renderer.render(state, size: Size(width: 200, height: 60))
        XCTAssertTrue(screen.text.contains("100000/100000 flows"))
        XCTAssertTrue(screen.text.contains("/v1/items/99999"), "follow shows the newest flow")

        Reducer.applyFilter("~c 5xx", in: &state)
        XCTAssertEqual(state.rows.count, (0..<Self.flowCount).filter { $0 % 10 != 0 && [5, 6].contains($0 % 7) }.count)

        Reducer.applyFilter(nil, in: &state)
        _ = Reducer.reduce(&state, .command(.cycleSort))
        XCTAssertEqual(state.view.sortKey, .duration)
        let durations = state.rows.compactMap { state.session.store[$0]?.log.timing.duration }
        XCTAssertEqual(durations.count, Self.flowCount * 9 / 10)
        XCTAssertEqual(durations, durations.sorted(), "finished flows in duration order")

        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(Self.flowCount)))], at: Fixtures.epoch))
        XCTAssertEqual(state.rows.count, Self.flowCount, "at the limit, the newest flow evicts the oldest")
        let newest = try XCTUnwrap(state.session.store.sequence(of: Fixtures.id(Self.flowCount)))
        XCTAssertTrue(state.rows.contains(newest), "the new flow joins the sorted view")
        XCTAssertNil(state.session.store.sequence(of: Fixtures.id(0)), "the oldest flow was evicted")
    }

    func testDetailOfAOneMegabyteJSONBody() {
        var state = AppState(size: Size(width: 200, height: 60), timeZone: Fixtures.utc)
        let items = (0..<20_000).map { #"{"id":\#($0),"name":"item \#($0)","ok":true}"# }
        let body = "[" + items.joined(separator: ",") + "]"
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [
            .flowStarted(Fixtures.started(1)), .flowFinished(Fixtures.finished(1, body: body)),
        ]), at: Fixtures.epoch))
        state.press("enter", "2")
        let screen = Renderer.render(state, size: Size(width: 200, height: 60))
        XCTAssertTrue(screen.text.contains(#""id": 0"#), screen.text)
        XCTAssertEqual(Renderer.render(state, size: Size(width: 200, height: 60)), screen, "the cached lines draw the same screen")
    }
}
