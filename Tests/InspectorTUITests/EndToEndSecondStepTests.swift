import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The second step of the UI (issue 15) through the real binary in tmux:
/// marks and comments kept in --save and HAR, the diff, the command bar,
/// copy as Swift and HTTPie, fitted columns, the mouse.
final class EndToEndSecondStepTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    private func start(_ function: String = #function, arguments: [String] = [], listens: Bool = true) throws -> TmuxSession {
        let session = try TmuxSession(name: function, arguments: arguments, listens: listens)
        tmux = session
        if listens { try session.waitFor("listening on unix:\(session.socketPath)") }
        return session
    }

    private func temporaryPath(_ suffix: String) -> String {
        NSTemporaryDirectory() + "netinspect-e2e-\(UUID().uuidString)\(suffix)"
    }

    func testMarksAndCommentsAreSavedAndReadBack() throws {
        let save = temporaryPath(".jsonl")
        let har = temporaryPath(".har")
        defer { for path in [save, har] { try? FileManager.default.removeItem(atPath: path) } }
        let ui = try start(arguments: ["--save", save, "--har", har])
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: "/one", status: 200)
        try agent.sendFlow(2, method: "GET", path: "/two", status: 500)
        try ui.waitFor("2/2 flows")
        ui.send("g")
        ui.send("m")
        ui.send("#")
        try ui.waitFor("Comment:")
        ui.type("works")
        ui.send("Enter")
        var screen = try ui.waitFor("# works")
        XCTAssertTrue(screen.contains("●"), screen)
        ui.send("M")
        screen = try ui.waitFor("1/2 flows")
        XCTAssertTrue(screen.contains("filter: ~marked") && !screen.contains("/two"), screen)
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
        tmux?.kill()

        let saved = try FlowFile.readContents(path: save)
        XCTAssertEqual(saved.annotations[EndToEnd.id(1)], FlowAnnotation(isMarked: true, comment: "works"))
        let exported = try FlowFile.readContents(path: har)
        XCTAssertEqual(exported.annotations[EndToEnd.id(1)], FlowAnnotation(isMarked: true, comment: "works"))

        let reader = try start("\(#function)-read", arguments: ["--read", save], listens: false)
        screen = try reader.waitFor("/two")
        XCTAssertTrue(screen.contains("# works") && screen.contains("●"), "marks and comments read back from --save:\n\(screen)")
        reader.send("]")
        reader.send("Enter")
        screen = try reader.waitFor("Comment: works")
        XCTAssertTrue(screen.contains("● marked"), screen)
    }

    func testDiffOfTwoFlowsFromAFile() throws {
        let file = temporaryPath(".jsonl")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var good = EndToEnd.flow(1, method: "POST", path: "/orders?x=1")
        good.apply(EndToEnd.finished(1, status: 200))
        var bad = EndToEnd.flow(2, method: "POST", path: "/orders?x=2")
        var finished = EndToEnd.finished(2, status: 422)
        finished.response?.body = CapturedBody(data: Data(#"{"status":422,"retry":false,"reason":"token"}"#.utf8))
        bad.apply(finished)
        try (good.jsonLine() + Data("\n".utf8) + bad.jsonLine() + Data("\n".utf8)).write(to: URL(fileURLWithPath: file))
        let ui = try start(arguments: ["--read", file], listens: false)
        try ui.waitFor("/orders?x=2")
        ui.send("g")
        ui.send("=")
        try ui.waitFor("Diff base")
        ui.send("j")
        ui.send("+")
        let screen = try ui.waitFor("Response body (JSON, by path)")
        XCTAssertTrue(screen.contains("?x") && screen.contains("~ status") && screen.contains("422"), screen)
        XCTAssertTrue(screen.contains("$.retry") && screen.contains("+ $.reason"), screen)
        ui.send("q")
        try ui.waitFor("2/2 flows")
    }

    func testCommandBarRunsCompletesAndRemembers() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: "/fine", status: 200)
        try agent.sendFlow(2, method: "POST", path: "/broken", status: 503)
        try ui.waitFor("2/2 flows")
        ui.send(":")
        ui.type("filter ~c 5xx")
        ui.send("Enter")
        var screen = try ui.waitFor("1/2 flows")
        XCTAssertFalse(screen.contains("/fine"), screen)
        ui.send(":")
        ui.type("so")
        ui.send("Tab")
        ui.type(" dur")
        ui.send("Tab")
        try ui.waitFor(":sort duration")
        ui.send("Enter")
        try ui.waitFor("sort: duration")
        ui.send(":")
        ui.send("Up")
        ui.send("Up")
        try ui.waitFor(":filter ~c 5xx")
        ui.send("Escape")
        ui.send(":")
        ui.type("nonsense")
        ui.send("Enter")
        try ui.waitFor("Unknown command \"nonsense\"")
        ui.send("?")
        // tmux can be read between the help's title and its rows being drawn: wait for both.
        screen = try ui.waitFor("netinspect keys") { $0.contains(":mark") || $0.contains(":filter") }
        XCTAssertTrue(screen.contains(":mark") || screen.contains(":filter"), "help lists the bar names beside the keys:\n\(screen)")
        ui.send("Escape")
        ui.send(":")
        ui.type("quit")
        ui.send("Enter")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }

    func testCopyAsSwiftAndHTTPieReachTheClipboard() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "DELETE", path: "/items/9", status: 204)
        try ui.waitFor("/items/9")
        ui.send("S")
        var screen = try ui.waitFor("Swift code, sent to the clipboard")
        XCTAssertTrue(screen.contains("request.httpMethod = \"DELETE\""), screen)
        let deadline = Date().addingTimeInterval(10)
        while !ui.clipboard().contains("URLRequest(url:"), Date() < deadline { usleep(50_000) }
        XCTAssertTrue(ui.clipboard().contains("forHTTPHeaderField: \"X-Request-Id\""), ui.clipboard())
        ui.send("q")
        ui.send("H")
        screen = try ui.waitFor("HTTPie command")
        XCTAssertTrue(screen.contains("http --ignore-stdin 'DELETE' 'http://127.0.0.1:8080/items/9'"), screen)
    }

    func testColumnsFitAndCanBeChosen() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "OPTIONS", path: "/preflight", status: 204)
        var screen = try ui.waitFor("/preflight")
        XCTAssertTrue(screen.range(of: "OPTIONS  204 127\\.0\\.0\\.1:8080 +/preflight", options: .regularExpression) != nil,
                      "OPTIONS whole, the host with its port:\n\(screen)")
        ui.send(":")
        ui.type("columns code,method,path")
        ui.send("Enter")
        screen = try ui.waitFor(" Code Method  Path")
        XCTAssertFalse(screen.contains("Host"), screen)
    }

    func testImageMultipartAndHTMLBodyViews() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        var upload = EndToEnd.flow(1, method: "POST", path: "/upload")
        upload.request.headers.append(HTTPHeader(name: "Content-Type", value: "multipart/form-data; boundary=B"))
        upload.request.body = CapturedBody(data: Data("--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n--B--\r\n".utf8))
        try agent.send(.flowStarted(upload))
        var finished = EndToEnd.finished(1, status: 200)
        finished.response?.headers = [HTTPHeader(name: "Content-Type", value: "image/png")]
        finished.response?.mimeType = "image/png"
        finished.response?.body = CapturedBody(data: BodyViewTests.png)
        try agent.send(.flowFinished(finished))
        try ui.waitFor("/upload")
        ui.send("Enter")
        try ui.waitFor("Part 1  title")
        ui.send("Tab")
        let screen = try ui.waitFor("Image  PNG, 320 × 240 px")
        XCTAssertTrue(screen.contains("89 50 4e 47"), screen)
    }

    /// Clicks and the wheel as xterm reports them (X10 encoding, which
    /// tmux-256color's kmous names): tmux passes the bytes to the pane and
    /// ncurses decodes them.
    func testMouseClickSelectsAndOpens() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        for number in 1...3 { try agent.sendFlow(number, method: "GET", path: "/row\(number)", status: 200) }
        try ui.waitFor("3/3 flows")
        func press(row: Int, column: Int) -> String {
            "\u{1B}[M" + String(UnicodeScalar(UInt8(32)))
                + String(UnicodeScalar(UInt8(33 + column))) + String(UnicodeScalar(UInt8(33 + row)))
        }
        func release(row: Int, column: Int) -> String {
            "\u{1B}[M" + String(UnicodeScalar(UInt8(35)))
                + String(UnicodeScalar(UInt8(33 + column))) + String(UnicodeScalar(UInt8(33 + row)))
        }
        let wheelUp = "\u{1B}[M" + String(UnicodeScalar(UInt8(32 + 64))) + String(UnicodeScalar(UInt8(53))) + String(UnicodeScalar(UInt8(36)))
        // The wheel moves the selection from the newest flow (row 3) to row 1,
        // so a single click on row 1 opens it (a click elsewhere only selects).
        ui.type(wheelUp)
        try ui.waitFor("no follow")
        ui.type(press(row: 1, column: 20) + release(row: 1, column: 20))
        var screen = try ui.waitFor("X-Request-Id: e2e-1")
        XCTAssertTrue(screen.contains("/row1"), screen)
        ui.send("Escape")
        try ui.waitFor("3/3 flows")
        ui.type(press(row: 2, column: 20) + release(row: 2, column: 20))
        usleep(300_000)
        XCTAssertFalse(ui.capture().contains("X-Request-Id"), "the first click only selects")
        ui.type(press(row: 2, column: 20) + release(row: 2, column: 20))
        screen = try ui.waitFor("X-Request-Id: e2e-2")
        XCTAssertTrue(screen.contains("/row2"), screen)
    }
}
