import Foundation
@testable import InspectorCore
import WireProtocol
import XCTest

/// The UI core at 100,000 flows. Bounds are generous because tests run in
/// debug builds on shared machines; the printed figures are what to watch.
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

    private func time(_ label: String, _ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        let elapsed = clock.measure(body)
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        print("scale: \(label): \(String(format: "%.1f", milliseconds)) ms")
        return milliseconds
    }

    func testRenderFilterAndSortAtOneHundredThousandFlows() {
        var state = Self.bigState()
        XCTAssertEqual(state.rows.count, Self.flowCount)

        var screen = Screen(size: .minimum)
        let render = time("render 200x60 (follow, last page)") { screen = Renderer.render(state, size: Size(width: 200, height: 60)) }
        XCTAssertTrue(screen.text.contains("100000/100000 flows"))
        XCTAssertLessThan(render, 100)

        let filter = time("filter ~c 5xx") { Reducer.applyFilter("~c 5xx", in: &state) }
        XCTAssertEqual(state.rows.count, (0..<Self.flowCount).filter { $0 % 10 != 0 && [5, 6].contains($0 % 7) }.count)
        XCTAssertLessThan(filter, 1_000)

        _ = time("clear filter") { Reducer.applyFilter(nil, in: &state) }
        let sort = time("sort by duration") { _ = Reducer.reduce(&state, .command(.cycleSort)) }
        XCTAssertEqual(state.view.sortKey, .duration)
        XCTAssertLessThan(sort, 2_000)

        let arrival = time("one new flow while sorted by duration") {
            _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(Self.flowCount)))], at: Fixtures.epoch))
        }
        XCTAssertLessThan(arrival, 100)
    }

    func testDetailOfAOneMegabyteJSONBody() {
        var state = AppState(size: Size(width: 200, height: 60), timeZone: Fixtures.utc)
        let items = (0..<20_000).map { #"{"id":\#($0),"name":"item \#($0)","ok":true}"# }
        let body = "[" + items.joined(separator: ",") + "]"
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [
            .flowStarted(Fixtures.started(1)), .flowFinished(Fixtures.finished(1, body: body)),
        ]), at: Fixtures.epoch))
        state.press("enter", "2")
        var screen = Screen(size: .minimum)
        let render = time("render detail of a \(body.utf8.count / 1024) KiB JSON body") {
            screen = Renderer.render(state, size: Size(width: 200, height: 60))
        }
        XCTAssertTrue(screen.text.contains(#""id": 0"#), screen.text)
        XCTAssertLessThan(render, 2_000)
        let again = time("render it again (cached lines)") { screen = Renderer.render(state, size: Size(width: 200, height: 60)) }
        XCTAssertLessThan(again, render)
    }

    func testMemoryPerFlowWithoutBodies() throws {
        let before = try Self.residentBytes()
        let state = Self.bigState()
        let after = try Self.residentBytes()
        let perFlow = Double(after - before) / Double(state.session.store.count)
        print("scale: resident memory per flow without bodies: \(Int(perFlow)) bytes")
        XCTAssertLessThan(perFlow, 8 * 1024)
        withExtendedLifetime(state) {}
    }

    private static func residentBytes() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return (Int(statm[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
