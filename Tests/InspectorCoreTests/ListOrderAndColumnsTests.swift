import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// The list's order and columns: by start time whatever the file's order,
/// a header that stays put while scrolling, room for the path at 80 columns.
final class ListOrderAndColumnsTests: XCTestCase {
    func testTimeOrderFollowsStartTimesNotFileOrder() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let fileOrder = [3, 1, 2]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: fileOrder.map { .flowStarted(Fixtures.started($0)) }), at: Fixtures.epoch))
        let started = { (state: AppState) in state.rows.map { state.session.store[$0]!.log.id } }
        XCTAssertEqual(started(state), [1, 2, 3].map(Fixtures.id))
        state.press("v")
        XCTAssertEqual(started(state), [3, 2, 1].map(Fixtures.id))
    }

    func testColumnsStayPutWhileScrollingAndThePathHasRoom() {
        var state = AppState(size: .minimum, timeZone: Fixtures.utc)
        let messages = (1...60).flatMap { number -> [Message] in
            let host = number <= 30 ? "a.example" : "a-much-longer-host-name.example.com:8443"
            return [.flowStarted(Fixtures.started(number, url: "https://\(host)/p/\(number)")), .flowFinished(Fixtures.finished(number))]
        }
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        state.press("g")
        let top = state.screen(size: .minimum).split(separator: "\n")[0]
        state.press("G")
        let bottom = state.screen(size: .minimum)
        XCTAssertEqual(top, bottom.split(separator: "\n")[0], "the header moved")
        let columns = Renderer.columns(ListColumn.standard.filter { $0 != .app }, width: 79)
        XCTAssertGreaterThanOrEqual(columns.first { $0.kind == .path }?.width ?? 0, 20, "\(columns)")
        XCTAssertNil(columns.first { $0.kind == .type }, "the type gives way before the path: \(columns)")
        XCTAssertTrue(bottom.contains("a-much-longer-ho"), bottom)
    }

    func testTheHostColumnNamesThePortOnlyWhenTheURLDoes() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let urls = ["https://user@Host.example:8443/one", "https://[::1]/two", "http://[::1]:8080/three"]
        let messages = urls.enumerated().map { Message.flowStarted(Fixtures.started($0.offset + 1, url: $0.element)) }
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        let lines = state.screen(size: Fixtures.wide).split(separator: "\n")
        func row(_ path: String) -> String { lines.first { $0.contains(path) }.map(String.init) ?? "" }
        XCTAssertTrue(row("/one").contains("host.example:8443"), row("/one"))
        XCTAssertFalse(row("/one").contains("user"), "no user info: \(row("/one"))")
        XCTAssertTrue(row("/two").contains(" ::1 "), row("/two"))
        XCTAssertTrue(row("/three").contains("[::1]:8080"), row("/three"))
    }
}
