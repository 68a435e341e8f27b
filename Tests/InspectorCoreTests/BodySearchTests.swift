import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// `/` in the detail view finds everything captured, not only the lines a
/// long body shows at first (as `~bs` in a filter does).
final class BodySearchTests: XCTestCase {
    /// A JSON array whose pretty-printed form runs past the lines shown.
    private func longJSON(items: Int) -> String {
        "[" + (0..<items).map { #"{"id":\#($0),"name":"item \#($0)"}"# }.joined(separator: ",") + "]"
    }

    private func detail(of body: String) -> AppState {
        var state = AppState(size: Size(width: 120, height: 40), timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1)),
                                                                         .flowFinished(Fixtures.finished(1, body: body))]), at: Fixtures.epoch))
        state.press("enter", "2")
        return state
    }

    func testASearchFindsTextPastTheLinesFirstShown() throws {
        var state = detail(of: longJSON(items: 3_000))
        guard case .detail(let before) = state.mode else { return XCTFail("the detail view is open") }
        XCTAssertTrue(state.detailLines(before).contains { $0.text.hasPrefix("… more lines not shown") }, "the body is longer than what shows at first")
        XCTAssertFalse(state.detailLines(before).contains { $0.text.contains("\"item 2999\"") })
        state.enter("item 2999\"", after: "/")
        guard case .detail(let after) = state.mode else { return XCTFail("still in the detail view") }
        XCTAssertNil(state.notice, "\(String(describing: state.notice))")
        XCTAssertTrue(state.detailLines(after).count > BodyFormatter.maximumLines, "the body is shown whole now")
        XCTAssertTrue(Renderer.render(state, size: state.size).text.contains("\"item 2999\""), "the match is on screen")
    }

    func testNextMatchGoesOnPastTheLinesFirstShown() {
        var state = detail(of: longJSON(items: 3_000))
        // Items 29 and 290 to 299 are among the first lines; 2900 is far past them.
        state.enter("\"item 29", after: "/")
        var seen: [String] = []
        for _ in 0..<12 {
            guard case .detail(let shown) = state.mode else { return XCTFail("detail") }
            seen.append(state.detailLines(shown)[shown.scroll].text.trimmingCharacters(in: .whitespaces))
            state.press("n")
        }
        XCTAssertEqual(seen.last, #""name": "item 2900""#, "\(seen)")
    }

    func testTextThatIsNowhereIsStillNotFound() {
        var state = detail(of: longJSON(items: 3_000))
        state.enter("no such text", after: "/")
        XCTAssertEqual(state.notice?.text, "\"no such text\" not found")
    }
}
