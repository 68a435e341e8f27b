import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// mitmproxy's flow keys: `d` deletes, `D` duplicates, `b` saves a body,
/// `space`/`p` walk the flows from the detail view, `I` switches breakpoints.
final class FlowEditsTests: XCTestCase {
    func testDeleteRemovesTheFlowFromListCountsFilesAndLaterEvents() {
        var state = Fixtures.mixedState()
        state.press("g")
        let deleted = state.selection!
        state.press("d")
        XCTAssertEqual(state.rows.count, 5)
        XCTAssertFalse(state.rows.contains(deleted))
        XCTAssertEqual(state.session.store.count, 5)
        XCTAssertTrue(state.notice?.text.hasPrefix("Deleted GET /v1/items/1") == true, "\(String(describing: state.notice))")
        state.press("W")
        guard case .exportHAR(let flows, _, _) = state.press("enter") else { return XCTFail("W, then enter, exports") }
        XCTAssertFalse(flows.contains { $0.id == Fixtures.id(1) })
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowFinished(Fixtures.finished(1)))], at: Fixtures.epoch))
        XCTAssertEqual(state.rows.count, 5, "a later event does not bring it back")
    }

    func testDeleteInTheDetailViewGoesBackToTheList() {
        var state = Fixtures.mixedState()
        state.press("g", "enter", "d")
        XCTAssertEqual(state.mode, .list)
        XCTAssertEqual(state.rows.count, 5)
    }

    func testDuplicateAddsACopyThatNetinspectReplaysItself() {
        var state = Fixtures.mixedState()
        state.press("g", "D")
        XCTAssertEqual(state.rows.count, 7)
        // Started when its original did: beside it in time order, as in mitmproxy.
        let copy = state.session.store[state.rows[1]]!
        XCTAssertNotEqual(copy.log.id, Fixtures.id(1))
        XCTAssertEqual(copy.log.request, state.session.store[state.rows[0]]!.log.request)
        state.press("g", "j")
        guard case .send(let own) = state.press("r") else { return XCTFail("no app can replay a duplicate") }
        XCTAssertEqual(own.request.url, copy.log.request.url)
    }

    func testSaveBodyAsksForAFileAndWritesTheShownSide() {
        var state = Fixtures.mixedState()
        state.press("g", "b")
        XCTAssertEqual(state.prompt?.purpose, .saveBody(state.selection!, request: false))
        XCTAssertEqual(state.prompt?.text, "1.json")
        let effect = state.enter("/tmp/out.json", after: "b")
        guard case let .writeFile(data, path, note) = effect else { return XCTFail("\(effect)") }
        XCTAssertEqual(path, "/tmp/out.json")
        XCTAssertEqual(data, Data(#"{"id":1,"name":"Zoë","tags":["a","b"],"ok":true,"price":12.5,"none":null}"#.utf8))
        XCTAssertEqual(note, "Saved the response body to /tmp/out.json")

        state.press("j", "j", "enter", "1")
        guard case let .writeFile(form, _, formNote) = state.enter("/tmp/form.txt", after: "b") else { return XCTFail() }
        XCTAssertEqual(String(decoding: form, as: UTF8.self), "name=Zo%C3%AB+K&city=%E6%9D%B1%E4%BA%AC&empty=")
        XCTAssertTrue(formNote.contains("request body"), formNote)
    }

    func testSaveBodyFromTheCommandBarAndWithoutABody() {
        var state = Fixtures.mixedState()
        state.press("G")
        state.enter("savebody /tmp/none", after: ":")
        XCTAssertEqual(state.notice?.isError, true, "a pending flow has no response body")
        state.press("g")
        guard case .writeFile(_, "/tmp/x.json", _) = state.enter("savebody /tmp/x.json", after: ":") else { return XCTFail() }
    }

    func testSpaceAndPWalkTheFlowsFromTheDetailView() {
        var state = Fixtures.mixedState()
        state.press("g", "enter", "3", "space")
        guard case .detail(let next) = state.mode else { return XCTFail() }
        XCTAssertEqual(next.sequence, state.rows[1])
        XCTAssertEqual(next.tab, .timing, "the tab stays")
        state.press("p", "p")
        guard case .detail(let first) = state.mode else { return XCTFail() }
        XCTAssertEqual(first.sequence, state.rows[0])
        XCTAssertEqual(state.notice?.text, "This is the first flow")
    }

    func testCapitalISwitchesBreakpointsOffAndBackOn() {
        var state = Fixtures.mixedState()
        state.enter("~m POST", after: "i")
        XCTAssertEqual(state.interceptFilter, "~m POST")
        state.press("I")
        XCTAssertNil(state.interceptFilter)
        state.press("I")
        XCTAssertEqual(state.interceptFilter, "~m POST")
    }
}
