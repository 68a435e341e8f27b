#if canImport(Glibc)
import Glibc
#endif
import Foundation
import InspectorCore
import TestSupport
import WireProtocol
import XCTest

@testable import InspectorTUI

/// `e` hands the terminal to the person's editor as git does: a real,
/// interactive `vi` (the default with `EDITOR` and `VISUAL` unset) reads the
/// keys typed in tmux, and netinspect takes the saved edit and answers keys
/// again afterwards. An editor that fails, or that Ctrl-C ends, is reported
/// on screen, and netinspect carries on.
final class EditorOwnsTheTerminalTests: XCTestCase {
    private var tmux: TmuxSession?
    private var server: DemoServer?
    private var files: [String] = []

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        server?.shutdown()
        server = nil
        files.forEach { try? FileManager.default.removeItem(atPath: $0) }
        super.tearDown()
    }

    /// Neither variable set: netinspect runs `vi`.
    private static let noEditorChosen = ["EDITOR": "", "VISUAL": ""]

    private static func requireVi() throws {
        _ = try Prerequisite.tool("vi", installedBy: "apt-get install vim-tiny")
    }

    /// netinspect reading one flow of a HAR file, a GET to a loopback server
    /// that echoes its X-Request-ID, so a replay's answer shows what was sent.
    private func startOnAFileFlow(_ function: String = #function, environment: [String: String], fromAShell: Bool = false) throws -> TmuxSession {
        if environment == Self.noEditorChosen { try Self.requireVi() }
        let server = try DemoServer()
        self.server = server
        var log = NetworkLog(
            request: Request(method: "GET", url: "http://127.0.0.1:\(server.port)/api/users?page=3",
                             headers: [HTTPHeader(name: "X-Request-ID", value: "before-the-edit")]),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_795_253_400), requestSent: 0.01, firstResponseByte: 0.02, finished: 0.03),
            state: .completed
        )
        log.response = Response(statusCode: 418, headers: [])
        let path = NSTemporaryDirectory() + "netinspect-editor-\(UUID().uuidString).har"
        try HARFile.write([log], to: path)
        files.append(path)
        let ui = try TmuxSession(name: function, arguments: ["--read", path], listens: false, environment: environment, fromAShell: fromAShell)
        tmux = ui
        try ui.waitFor(" 418 ")
        return ui
    }

    /// Opens the file's flow and asks to edit it.
    private func edit(in ui: TmuxSession) throws {
        ui.send("Enter")
        try ui.waitFor("1 Request")
        ui.send("e")
    }

    /// Keys still reach netinspect: from the flow back to the list, open
    /// it again, back, quit.
    private func assertNetinspectAnswersKeys(_ ui: TmuxSession, listing flows: String = "1/1 flows",
                                             file: StaticString = #filePath, line: UInt = #line) throws {
        ui.send("Escape")
        try ui.waitFor("Dur", where: { $0.contains(flows) })
        ui.send("Enter")
        try ui.waitFor("1 Request")
        ui.send("Escape")
        try ui.waitFor("Dur")
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean, file: file, line: line)
    }

    func testViEditsARequestWithRealKeysAndNetinspectSendsTheEdit() throws {
        let ui = try startOnAFileFlow(environment: Self.noEditorChosen)
        try edit(in: ui)
        // vi's own screen: the request as text, and vi's line naming the file.
        try ui.waitFor("X-Request-I", where: { $0.contains("netinspect-edit-") && !$0.contains(" 418 ") })
        ui.type(":%s/before-the-edit/typed-in-vi/")
        ui.send("Enter")
        try ui.waitFor("typed-in-vi")
        ui.type(":wq")
        ui.send("Enter")
        try ui.waitFor("netinspect sent your edit: GET /api/users?page=3")
        ui.send("Escape")
        try ui.waitFor("2/2 flows", where: { $0.contains(" 200 ") })
        ui.send("G")
        ui.send("Enter")
        try ui.waitFor("sent again by netinspect itself")
        ui.send("2")
        // The loopback server echoes the header netinspect sent.
        try ui.waitFor("HTTP 200 OK", where: { $0.range(of: "X-Request-I[dD]: typed-in-vi", options: .regularExpression) != nil })
        try assertNetinspectAnswersKeys(ui, listing: "2/2 flows")
    }

    /// As first reported: in `--demo`, a POST held at a breakpoint, opened,
    /// `e`, and vi; saving resumes it with the edit.
    func testViEditsAHeldRequestOfTheDemo() throws {
        try Self.requireVi()
        let ui = try TmuxSession(name: #function, arguments: ["--demo"], listens: false, environment: Self.noEditorChosen)
        tmux = ui
        try ui.waitFor("/api/users")
        ui.send("i")
        ui.type("~m POST & ~u /api/orders")
        ui.send("Enter")
        try ui.waitFor("HELD", timeout: 30)
        // Only the orders, the newest last: every one since the breakpoint is held.
        ui.send("f")
        ui.type("~u /api/orders")
        ui.send("Enter")
        try ui.waitFor("filter: ~u /api/orders")
        ui.send("G")
        ui.send("Enter")
        try ui.waitFor("at a breakpoint before its request is sent")
        ui.send("e")
        try ui.waitFor("/api/orders HTTP/1.1", where: { $0.contains("netinspect-edit-") })
        ui.type(":%s/orders HTTP/orders?edited=in-vi HTTP/")
        ui.send("Enter")
        try ui.waitFor("edited=in-vi")
        ui.type(":wq")
        ui.send("Enter")
        try ui.waitFor("Resumed with your edit: POST /api/orders?edited=in-vi")
        ui.send("I")
        // The footer, not the notice: a response held before the agent
        // learned may still arrive, and its notice takes the line.
        try ui.waitFor("flows │", where: { !$0.contains("intercept:") })
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }

    /// `:cq` quits vi with an error status: nothing is sent, and the notice
    /// says the editor failed (the terminal's answers to vi's queries are
    /// not read as keys that would run commands and hide it).
    func testViQuittingWithAnErrorIsReported() throws {
        let ui = try startOnAFileFlow(environment: Self.noEditorChosen)
        try edit(in: ui)
        try ui.waitFor("X-Request-I", where: { $0.contains("netinspect-edit-") && !$0.contains(" 418 ") })
        ui.type(":cq")
        ui.send("Enter")
        try ui.waitFor("Could not edit: vi exited with status 1; nothing was changed")
        try assertNetinspectAnswersKeys(ui)
    }

    func testAnEditorThatFailsAtOnceIsReported() throws {
        let ui = try startOnAFileFlow(environment: ["EDITOR": "false", "VISUAL": ""])
        try edit(in: ui)
        try ui.waitFor("Could not edit: false exited with status 1; nothing was changed")
        try assertNetinspectAnswersKeys(ui)
    }

    func testAnEditorThatIsNotInstalledIsReported() throws {
        let ui = try startOnAFileFlow(environment: ["EDITOR": "no-such-editor-\(getpid())", "VISUAL": ""])
        try edit(in: ui)
        try ui.waitFor("Could not edit: no-such-editor-\(getpid()) exited with status 127 (not found); nothing was changed")
        try assertNetinspectAnswersKeys(ui)
    }

    /// Ctrl-Z in vi stops vi and netinspect together, as it stops git and
    /// its editor: the shell has the terminal, `fg` brings back vi alone
    /// (netinspect does not draw over it), and quitting vi returns to
    /// netinspect.
    func testCtrlZInTheEditorStopsBothAndFgResumesTheEditor() throws {
        let ui = try startOnAFileFlow(environment: Self.noEditorChosen, fromAShell: true)
        try edit(in: ui)
        try ui.waitFor("X-Request-I", where: { $0.contains("netinspect-edit-") && !$0.contains(" 418 ") })
        ui.send("C-z")
        try ui.waitFor("Stopped")
        ui.type("fg")
        ui.send("Enter")
        try ui.waitFor("before-the-edit", where: { !$0.contains("Stopped") && !$0.contains("1 Request") && !$0.contains("flows │") })
        ui.type(":q")
        ui.send("Enter")
        try ui.waitFor("Unchanged: nothing replayed")
        ui.send("Escape")
        try ui.waitFor("Dur", where: { $0.contains("1/1 flows") })
        ui.send("Q")
        try ui.waitFor("bash-", where: { !$0.contains("flows │") })
    }

    /// An editor that reads the terminal in cooked mode (a script's `read`):
    /// Ctrl-C reaches the whole foreground group; it ends the editor, which
    /// is reported, and netinspect, which ignores it while the editor runs,
    /// carries on.
    func testCtrlCEndsTheEditorNotNetinspect() throws {
        let script = NSTemporaryDirectory() + "ni-ask-\(UUID().uuidString.prefix(8)).sh"
        try Data("#!/bin/sh\nprintf 'answer? '\nread answer\n".utf8).write(to: URL(fileURLWithPath: script))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        files.append(script)
        let ui = try startOnAFileFlow(environment: ["EDITOR": script, "VISUAL": ""])
        try edit(in: ui)
        try ui.waitFor("answer?", where: { !$0.contains(" 418 ") })
        ui.send("C-c")
        try ui.waitFor("Could not edit: \(script) was killed by signal 2 (Interrupt); nothing was changed")
        try assertNetinspectAnswersKeys(ui)
    }
}
