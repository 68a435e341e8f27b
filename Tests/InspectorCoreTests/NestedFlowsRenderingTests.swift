import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// What the nested list and an inbound flow's waterfall look like, and
/// that `--dump`, `--save` and HAR keep direction and parent.
final class NestedFlowsRenderingTests: XCTestCase {
    private static let wide = Size(width: 160, height: 40)

    private func waterfall(size: Size = .minimum) -> AppState {
        var state = TracedFlows.state(size: size)
        state.press("g", "enter", "3")
        return state
    }

    func testNestedListSnapshots() {
        for (size, name) in [(Size.minimum, "nested-80x24"), (Self.wide, "nested-160x40")] {
            var state = TracedFlows.state(size: size)
            state.press("T", "g")
            assertSnapshot(state, named: name, size: size)
            state.press("-")
            assertSnapshot(state, named: name + "-collapsed", size: size)
        }
    }

    func testWaterfallSnapshots() {
        assertSnapshot(waterfall(), named: "waterfall-80x24")
        assertSnapshot(waterfall(size: Self.wide), named: "waterfall-160x40", size: Self.wide)
    }

    func testWaterfallPlacesEachCallOnTheParentsTimeLine() throws {
        let state = waterfall(size: Self.wide)
        guard case .detail(let detail) = state.mode else { return XCTFail("not in the detail view") }
        let lines = state.detailLines(detail)
        XCTAssertEqual(lines.first?.text, "Calls made while handling it: 3; slowest POST /payments 120.0 ms; 1 failed")
        func bar(_ path: String) throws -> (start: Int, length: Int, style: Style) {
            let line = try XCTUnwrap(lines.dropFirst().first { $0.text.contains(path) }, path)
            let label = line.spans[0].text.count
            let gap = line.spans[1].text.count
            return (label + gap, line.spans[2].text.count, line.spans[2].style)
        }
        let parent = try bar("/checkout"), slowest = try bar("/payments"), failed = try bar("/shipping"), quick = try bar("/inventory")
        let width = Double(parent.length)
        // 0.200 s long; calls at +10, +50 and +60 ms, lasting 30, 120 and 20 ms. Within a cell:
        // the offsets come from dates, whose sums are not exact in binary.
        func cells(_ seconds: Double) -> Double { seconds / 0.2 * width }
        XCTAssertEqual(Double(quick.start - parent.start), cells(0.010), accuracy: 1)
        XCTAssertEqual(Double(slowest.start - parent.start), cells(0.050), accuracy: 1)
        XCTAssertEqual(Double(slowest.length), cells(0.120), accuracy: 1)
        XCTAssertEqual(Double(failed.start - parent.start), cells(0.060), accuracy: 1)
        XCTAssertLessThan(quick.start, slowest.start)
        XCTAssertLessThan(slowest.start, failed.start)
        XCTAssertEqual([slowest.style, failed.style, quick.style], [.barSlowest, .failed, .barReceiving])
    }

    func testLongWaterfallsCollapseAndExpand() {
        var state = AppState(timeZone: Fixtures.utc)
        var messages: [Message] = [.flowStarted(TracedFlows.inbound())]
        for number in 20..<35 { messages.append(.flowStarted(TracedFlows.call(number, path: "/item/\(number)", at: 0.001 * Double(number)))) }
        TracedFlows.feed(messages, to: &state)
        state.press("g", "enter", "3")
        guard case .detail(let detail) = state.mode else { return XCTFail("not in the detail view") }
        var text = state.detailLines(detail).map(\.text)
        XCTAssertTrue(text.contains("└ … 3 more calls (- shows them all)"), text.joined(separator: "\n"))
        XCTAssertFalse(text.contains { $0.contains("/item/34") })
        state.press("-")
        guard case .detail(let expanded) = state.mode else { return XCTFail("left the detail view") }
        text = state.detailLines(expanded).map(\.text)
        XCTAssertTrue(text.contains { $0.contains("└ GET /item/34") }, text.joined(separator: "\n"))
    }

    func testRequestTabSaysWhichWayAndWhatWasCaused() {
        var state = TracedFlows.state(size: Self.wide)
        state.press("g", "enter")
        var screen = Renderer.render(state, size: state.size).text
        XCTAssertTrue(screen.contains("← Received by the app; made 3 calls while handling it (3: waterfall)"), screen)
        state.press("space")
        screen = Renderer.render(state, size: state.size).text
        XCTAssertTrue(screen.contains("Made while the app handled ←POST /checkout"), screen)
    }

    func testDumpShowsDirectionAndPairsCallsWithTheirParent() {
        let parent = TracedFlows.inbound()
        let call = TracedFlows.call(11, path: "/inventory/42", at: 0.01)
        let short = String(parent.id.description.prefix(8))
        let parentLine = DumpFormat.line(parent, in: Fixtures.utc)
        XCTAssertTrue(parentLine.contains(" ←POST ") && parentLine.hasSuffix("  #" + short), parentLine)
        let callLine = DumpFormat.line(call, in: Fixtures.utc)
        XCTAssertTrue(callLine.hasSuffix("  ↑" + short) && !callLine.contains("←"), callLine)
    }

    func testSaveAndHARKeepDirectionAndParent() throws {
        let flows = TracedFlows.state().session.store.allRecords.map(\.log)
        XCTAssertEqual(flows.filter(\.isInbound).count, 1)
        XCTAssertEqual(flows.filter { $0.parentID != nil }.count, 3)
        let lines = flows.reduce(Data()) { $0 + $1.jsonLine() + Data("\n".utf8) }
        XCTAssertEqual(try FlowFile.read(lines, name: "traced.jsonl"), flows)
        let har = try HARFile.encode(flows)
        XCTAssertEqual(try HARFile.decode(har), flows)
        try HARSchemaValidator.validate(har)
    }
}
