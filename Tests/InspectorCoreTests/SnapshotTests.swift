import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// Rendered 80x24 screens compared with text files in `Snapshots/`.
/// Run with `NETINSPECT_RECORD_SNAPSHOTS=1` to rewrite them after an
/// intended change, then review the diff.
final class SnapshotTests: XCTestCase {
    private func assertSnapshot(ofMixedStateAfter keys: [String], named name: String, file: StaticString = #filePath, line: UInt = #line) {
        var state = Fixtures.mixedState()
        for key in keys { state.press(key) }
        assertSnapshot(state, named: name, file: file, line: line)
    }

    func testEmptyList() {
        var state = AppState(timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox([.listening(.unix(path: "/tmp/netinspect-test.sock"))], at: Fixtures.epoch))
        assertSnapshot(state, named: "empty")
    }

    func testList() {
        assertSnapshot(Fixtures.mixedState(), named: "list")
    }

    func testListWithTwoAgentsShowsTheAppColumn() {
        var state = Fixtures.mixedState()
        let messages: [Message] = [.flowStarted(Fixtures.started(20, url: "http://localhost:8080/health"))]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(2, app: "billing", messages: messages), at: Fixtures.epoch))
        assertSnapshot(state, named: "list-two-agents")
    }

    func testRequestTab() {
        assertSnapshot(ofMixedStateAfter: ["g", "j", "j", "enter"], named: "detail-request")
    }

    func testResponseTabWithJSON() {
        assertSnapshot(ofMixedStateAfter: ["g", "enter", "2"], named: "detail-response-json")
    }

    func testResponseTabWithBinary() {
        assertSnapshot(ofMixedStateAfter: ["g", "j", "j", "j", "j", "enter", "2"], named: "detail-response-binary")
    }

    func testResponseTabOfAFailedFlow() {
        assertSnapshot(ofMixedStateAfter: ["g", "j", "j", "j", "enter", "2"], named: "detail-response-failed")
    }

    func testTimingTab() {
        assertSnapshot(ofMixedStateAfter: ["g", "enter", "3"], named: "detail-timing")
    }

    func testHelp() {
        assertSnapshot(ofMixedStateAfter: ["?"], named: "help")
    }

    func testRulesView() throws {
        var book = RuleBook(entries: [
            RuleBook.Entry(try TrafficRule(.mapRemote, spec: "|api.example.com|127.0.0.1:8080")),
            RuleBook.Entry(kind: .modifyHeaders, spec: "/~d example.com/X-Env/staging", rule: nil),
            RuleBook.Entry(try TrafficRule(.modifyHeaders, spec: "/X-Debug/1"), origin: .flag),
        ], path: "/home/dev/rules.txt")
        book.lastSave = .saved(path: "/home/dev/rules.txt")
        var state = Fixtures.mixedState()
        state = AppState(size: state.size, timeZone: Fixtures.utc, rules: book)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        _ = Reducer.reduce(&state, .inbox([.connected(ConnectionID(1), hello, peer: "unix")], at: Fixtures.epoch))
        state.press("R", "j")
        assertSnapshot(state, named: "rules")
    }

    func testFilterError() {
        var state = Fixtures.mixedState()
        state.enter("~c 5xx &", after: "f")
        assertSnapshot(state, named: "filter-error")
    }

    func testFilteredToNothing() {
        var state = Fixtures.mixedState()
        state.enter("~d nowhere.invalid", after: "f")
        assertSnapshot(state, named: "filter-empty")
    }

    func testEventLog() {
        var state = Fixtures.mixedState()
        _ = Reducer.reduce(&state, .inbox([.rejected(peer: "unix", reason: "frame length 1195725856 exceeds the limit of 16777216 bytes")], at: Fixtures.epoch))
        state.press("E")
        assertSnapshot(state, named: "events")
    }

    /// A diff of the JSON flow (base) and the 404, on the two sizes the issue asks for.
    func testDiffAt80x24And200x60() {
        var state = Fixtures.mixedState()
        state.press("g", "=", "j", "+")
        assertSnapshot(state, named: "diff-80x24")
        assertSnapshot(state, named: "diff-200x60", size: Size(width: 200, height: 60))
    }

    /// The new body views: an image described, a multipart request part by
    /// part, HTML indented; each at 80x24 and 200x60.
    func testBodyViews() {
        var state = AppState(timeZone: Fixtures.utc)
        let multipart = Data(("--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n").utf8)
            + Fixtures.png + Data("\r\n--B--\r\n".utf8)
        let messages: [Message] = [
            .flowStarted(Fixtures.started(1, url: "https://cdn.example.com/photo.png")),
            .flowFinished(Fixtures.finished(1, bytes: Array(Fixtures.png), contentType: "image/png")),
            .flowStarted(Fixtures.started(2, method: "POST", url: "https://api.example.com/upload",
                                         headers: [HTTPHeader(name: "Content-Type", value: "multipart/form-data; boundary=B")],
                                         body: CapturedBody(data: multipart))),
            .flowFinished(Fixtures.finished(2, body: "<html><head><title>Done</title></head><body><p>Saved<br>ok</p></body></html>",
                                            contentType: "text/html")),
        ]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        state.press("g", "enter", "2")
        assertSnapshot(state, named: "body-image-80x24")
        assertSnapshot(state, named: "body-image-200x60", size: Size(width: 200, height: 60))
        state.press("q", "j", "enter")
        assertSnapshot(state, named: "body-multipart-80x24")
        assertSnapshot(state, named: "body-multipart-200x60", size: Size(width: 200, height: 60))
        state.press("2")
        assertSnapshot(state, named: "body-html-80x24")
        assertSnapshot(state, named: "body-html-200x60", size: Size(width: 200, height: 60))
    }

    func testListWithMarksAndAComment() {
        var state = Fixtures.mixedState()
        state.press("g", "m", "j", "j", "#")
        state.type("fails after login")
        state.press("enter")
        assertSnapshot(state, named: "list-marks-comment")
    }

    func testWideScreenHasRoomForLongerColumns() {
        assertSnapshot(Fixtures.mixedState(size: Size(width: 120, height: 30)), named: "list-120x30", size: Size(width: 120, height: 30))
    }
}

/// Rendered screens compared with text files in `Snapshots/`; shared by the
/// suites that draw screens.
extension XCTestCase {
    static var snapshotDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    }

    /// Compares the screen `state` renders at `size` with `Snapshots/NAME.txt`.
    func assertSnapshot(_ state: AppState, named name: String, size: Size = .minimum, file: StaticString = #filePath, line: UInt = #line) {
        let screen = Renderer.render(state, size: size)
        let text = screen.text + "\n"
        let url = Self.snapshotDirectory.appendingPathComponent(name + ".txt")
        if ProcessInfo.processInfo.environment["NETINSPECT_RECORD_SNAPSHOTS"] != nil {
            try? FileManager.default.createDirectory(at: Self.snapshotDirectory, withIntermediateDirectories: true)
            XCTAssertNoThrow(try text.write(to: url, atomically: true, encoding: .utf8))
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            return XCTFail("no snapshot \(name).txt; record with NETINSPECT_RECORD_SNAPSHOTS=1", file: file, line: line)
        }
        XCTAssertEqual(text, expected, "screen differs from \(name).txt:\n\(text)", file: file, line: line)
    }
}
