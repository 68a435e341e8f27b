import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// `w` and `W` ask where to write the shown flows, offering a name stamped
/// with the time, as `b` asks where to save a body: nothing lands in the
/// working folder unasked.
final class WritingFlowsToFilesTests: XCTestCase {
    private func state() -> AppState {
        var state = Fixtures.mixedState(size: Size(width: 120, height: 30))
        _ = Reducer.reduce(&state, .tick(Fixtures.epoch))
        return state
    }

    func testWAsksForAJSONLinesFileOfferingAStampedNameAndWritesTheShownFlows() {
        var state = state()
        XCTAssertEqual(state.press("w"), .none, "nothing is written before the person says where")
        XCTAssertEqual(state.prompt?.purpose, .writeFlows(har: false))
        XCTAssertEqual(state.prompt?.text, "netinspect-20261121-093000.jsonl")
        XCTAssertTrue(Renderer.render(state, size: state.size).text.contains("Save the shown flows (JSON lines) to: netinspect-20261121-093000.jsonl"))
        guard case let .saveFlows(contents, path) = state.press("enter") else { return XCTFail("enter writes") }
        XCTAssertEqual(path, "netinspect-20261121-093000.jsonl")
        XCTAssertEqual(contents.flows.map(\.id), state.rows.compactMap { state.session.store[$0]?.log.id })
    }

    func testATypedNameReplacesTheOfferedOne() {
        var state = state()
        state.press("w")
        state.type("/tmp/mine.jsonl")
        guard case let .saveFlows(_, path) = state.press("enter") else { return XCTFail("enter writes") }
        XCTAssertEqual(path, "/tmp/mine.jsonl")
    }

    func testShiftWAsksForAHARFileInsteadOfWritingIntoTheWorkingFolder() {
        var state = state()
        XCTAssertEqual(state.press("W"), .none)
        XCTAssertEqual(state.prompt?.text, "netinspect-20261121-093000.har")
        state.type("out.har")
        guard case let .exportHAR(flows, _, path) = state.press("enter") else { return XCTFail("enter exports") }
        XCTAssertEqual(path, "out.har")
        XCTAssertEqual(flows.count, state.rows.count)
    }

    func testEscapeWritesNothing() {
        var state = state()
        state.press("W")
        XCTAssertEqual(state.press("esc"), .none)
        XCTAssertNil(state.prompt)
    }

    func testTheCommandBarWithoutAFileAsksAsTheKeysDo() {
        var state = state()
        state.press(":")
        state.type("save")
        XCTAssertEqual(state.press("enter"), .none)
        XCTAssertEqual(state.prompt?.purpose, .writeFlows(har: false))
        state.press("esc", ":")
        state.type("export flows.har")
        guard case let .exportHAR(_, _, path) = state.press("enter") else { return XCTFail(":export FILE writes at once") }
        XCTAssertEqual(path, "flows.har")
    }
}
