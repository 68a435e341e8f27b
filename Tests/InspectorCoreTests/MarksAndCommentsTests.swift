import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

final class MarksAndCommentsTests: XCTestCase {
    func testMTogglesTheMarkAndAsksForItToBeSaved() {
        var state = Fixtures.mixedState()
        state.press("g")
        XCTAssertEqual(state.press("m"), .annotationsChanged([Fixtures.id(1): FlowAnnotation(isMarked: true)]))
        XCTAssertEqual(state.session.store.markedSequences, [0])
        XCTAssertTrue(Renderer.render(state, size: .minimum).text.split(separator: "\n")[1].hasPrefix("●"))
        XCTAssertEqual(state.press("m"), .annotationsChanged([Fixtures.id(1): FlowAnnotation()]))
        XCTAssertEqual(state.session.store.markedSequences, [])
    }

    func testMarkedFilterAndJumpsBetweenMarks() {
        var state = Fixtures.mixedState()
        state.press("g", "m", "j", "j", "j", "m")
        XCTAssertEqual(state.session.store.markedSequences, [0, 3])
        state.press("G", "]")
        XCTAssertEqual(state.selection, 0, "] wraps round to the first mark")
        state.press("]")
        XCTAssertEqual(state.selection, 3)
        state.press("[")
        XCTAssertEqual(state.selection, 0)
        state.press("M")
        XCTAssertEqual(state.filterText, "~marked")
        XCTAssertEqual(state.rows, [0, 3])
        state.enter("~marked & ~e", after: "f")
        XCTAssertEqual(state.rows, [3])
        state.press("c")
        XCTAssertEqual(state.press("U"), .annotationsChanged([Fixtures.id(1): FlowAnnotation(), Fixtures.id(4): FlowAnnotation()]),
                       "every unmarked flow goes to the --save file")
        XCTAssertEqual(state.session.store.markedSequences, [])
    }

    func testUnmarkingUnderTheMarkedFilterRemovesTheRow() {
        var state = Fixtures.mixedState()
        state.press("g", "m", "j", "m", "M")
        XCTAssertEqual(state.rows, [0, 1])
        state.press("g", "m")
        XCTAssertEqual(state.rows, [1])
    }

    func testCommentIsEditedShownAndFiltered() {
        var state = Fixtures.mixedState()
        state.press("g", "#")
        state.type("works with token A")
        XCTAssertEqual(state.press("enter"), .annotationsChanged([Fixtures.id(1): FlowAnnotation(comment: "works with token A")]))
        let list = Renderer.render(state, size: Size(width: 140, height: 24)).text
        XCTAssertTrue(list.contains("# works with token A"), list)
        state.press("#")
        XCTAssertEqual(state.prompt?.text, "works with token A", "the prompt starts from the comment")
        state.press("esc")
        state.enter("token A", after: "f")
        XCTAssertEqual(state.rows, [], "a bare word matches the URL, not the comment")
        state.enter("~comment token", after: "f")
        XCTAssertEqual(state.rows, [0])
        state.press("enter")
        XCTAssertTrue(Renderer.render(state, size: .minimum).text.contains("Comment: works with token A"))
        state.press("#", "C-u", "enter")
        XCTAssertNil(state.session.store[0]?.annotation.comment, "an empty comment removes it")
    }

    func testSaveFileKeepsMarksAndCommentsAndReadsThemBack() throws {
        let path = NSTemporaryDirectory() + "netinspect-annotations-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try FlowLineWriter(path: path)
        let first = Fixtures.started(1)
        let second = Fixtures.started(2)
        // An annotation may be written before its flow (a pending flow marked).
        writer.write(FlowAnnotation(isMarked: true), for: second.id)
        writer.write(first)
        writer.write(FlowAnnotation(isMarked: true, comment: "old"), for: first.id)
        writer.write(second)
        writer.write(FlowAnnotation(isMarked: false, comment: "new \"quoted\"\nline"), for: first.id)
        XCTAssertEqual(writer.writtenFlows, 2)
        let contents = try FlowFile.readContents(path: path)
        XCTAssertEqual(contents.flows.map(\.id), [first.id, second.id])
        XCTAssertEqual(contents.annotations, [
            first.id: FlowAnnotation(comment: "new \"quoted\"\nline"),
            second.id: FlowAnnotation(isMarked: true),
        ])
        XCTAssertEqual(try FlowFile.read(path: path).count, 2, "readers of flows alone skip annotation lines")
    }

    func testHARKeepsCommentsInTheEntryCommentAndMarksInTheExtension() throws {
        let flows = [Fixtures.started(1), Fixtures.started(2), Fixtures.started(3)]
        let annotations = [flows[0].id: FlowAnnotation(isMarked: true, comment: "base"), flows[2].id: FlowAnnotation(isMarked: true)]
        let data = try HARFile.encode(flows, annotations: annotations)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try XCTUnwrap((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        XCTAssertEqual(entries[0]["comment"] as? String, "base")
        XCTAssertNil(entries[1]["comment"])
        XCTAssertEqual((entries[2]["_netinspect"] as? [String: Any])?["marked"] as? Bool, true)
        XCTAssertNil((entries[1]["_netinspect"] as? [String: Any])?["marked"])
        let read = try FlowFile.readContents(data, name: "test.har")
        XCTAssertEqual(read.annotations, annotations)
    }

    func testAnotherToolsHARCommentIsReadAsTheFlowsComment() throws {
        let har = #"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","time":1,"comment":"from the browser","request":{"method":"GET","url":"http://a/","headers":[]},"response":{"status":200,"headers":[],"content":{"size":0,"mimeType":"text/plain"}},"timings":{"send":0,"wait":1,"receive":0}}]}}"#
        let contents = try FlowFile.readContents(Data(har.utf8), name: "browser.har")
        XCTAssertEqual(contents.annotations.values.first, FlowAnnotation(comment: "from the browser"))
    }

    func testAnnotationsFromAFileAreRestoredInTheStore() {
        var state = Fixtures.mixedState()
        _ = Reducer.reduce(&state, .annotate([Fixtures.id(2): FlowAnnotation(isMarked: true, comment: "x"), FlowID(): FlowAnnotation(isMarked: true)]))
        XCTAssertEqual(state.session.store[1]?.annotation, FlowAnnotation(isMarked: true, comment: "x"))
        XCTAssertEqual(state.session.store.markedSequences, [1])
    }
}
