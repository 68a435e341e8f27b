import Foundation
import InspectorCore
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real `netinspect` binary without a terminal (`--dump`, `--json`,
/// `--save`, `--read`), and the export keys inside tmux.
final class HeadlessEndToEndTests: XCTestCase {
    private var directory: URL!
    private var tmux: TmuxSession?

    override func setUpWithError() throws {
        directory = URL(fileURLWithPath: "/tmp/netinspect-headless-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        tmux?.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts netinspect with `arguments`, standard output and error to files.
    private func launch(_ arguments: [String]) throws -> (Process, stdout: URL, stderr: URL) {
        let stdout = directory.appendingPathComponent("stdout"), stderr = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let process = Process()
        process.executableURL = try Prerequisite.netinspect()
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        return (process, stdout, stderr)
    }

    private func waitForFile(_ url: URL, toContain text: String, timeout: TimeInterval = 10) throws -> String {
        var contents = ""
        guard eventually(timeout: timeout, {
            contents = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            return contents.contains(text)
        }) else {
            throw E2EError("'\(text)' did not appear in \(url.lastPathComponent) within \(timeout)s:\n\(contents)")
        }
        return contents
    }

    private func waitForExit(_ process: Process, timeout: TimeInterval = 10) throws {
        guard eventually(timeout: timeout, { !process.isRunning }) else {
            process.terminate()
            throw E2EError("netinspect did not exit within \(timeout)s")
        }
    }

    func testDumpPrintsFinishedFlowsSavesThemAndExitsCleanlyOnSIGTERM() throws {
        let socket = directory.appendingPathComponent("s.sock").path
        let saved = directory.appendingPathComponent("saved.jsonl").path
        let (process, stdout, stderr) = try launch(["--dump", "--listen", "unix:\(socket)", "--save", saved])
        _ = try waitForFile(stderr, toContain: "listening on unix:\(socket)")
        let agent = try WireClient(agentOn: socket)
        try agent.sendFlow(1, method: "GET", path: "/alpha", status: 200)
        try agent.sendFlow(2, method: "POST", path: "/beta", status: 503)
        try agent.sendFlow(3, method: "GET", path: "/pending", status: nil)
        let output = try waitForFile(stdout, toContain: "/beta")
        let lines = output.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, "finished flows only, one line each:\n\(output)")
        XCTAssertTrue(lines[0].contains(" GET ") && lines[0].contains(" 200 ") && lines[0].contains("/alpha"), output)
        XCTAssertTrue(lines[1].contains(" POST ") && lines[1].contains(" 503 "), output)

        kill(process.processIdentifier, SIGTERM)
        try waitForExit(process)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the socket file is removed on exit")
        let savedFlows = try FlowFile.read(path: saved)
        XCTAssertEqual(savedFlows.map(\.request.method), ["GET", "POST"])
    }

    func testJSONWithAFilterPrintsMatchingFlowsAsNetworkLogLines() throws {
        let socket = directory.appendingPathComponent("j.sock").path
        let (process, stdout, stderr) = try launch(["--json", "--filter", "~c 5xx", "--listen", "unix:\(socket)"])
        defer { process.terminate() }
        _ = try waitForFile(stderr, toContain: "listening")
        let agent = try WireClient(agentOn: socket)
        try agent.sendFlow(1, method: "GET", path: "/ok", status: 200)
        try agent.sendFlow(2, method: "DELETE", path: "/broken", status: 500)
        let output = try waitForFile(stdout, toContain: "/broken")
        let lines = output.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, output)
        let flow = try NetworkLog(jsonLine: Array(lines[0].utf8))
        XCTAssertEqual(flow.request.method, "DELETE")
        XCTAssertEqual(flow.response?.statusCode, 500)
    }

    func testReadingAFileDumpsItAndExits() throws {
        var log = EndToEnd.flow(1, method: "PATCH", path: "/file")
        log.apply(EndToEnd.finished(1, status: 204))
        let har = directory.appendingPathComponent("in.har").path
        try HARFile.write([log], to: har)
        let (process, stdout, _) = try launch(["--read", har, "--dump"])
        try waitForExit(process)
        XCTAssertEqual(process.terminationStatus, 0)
        let output = try String(contentsOf: stdout, encoding: .utf8)
        XCTAssertTrue(output.contains("PATCH") && output.contains(" 204 ") && output.contains("/file"), output)
    }

    func testBadOptionsAreRefusedWithAReason() throws {
        for (arguments, reason) in [(["--dump", "--json"], "pick one"), (["--filter", "(~c 5xx"], "--filter: expected ')'"),
                                    (["--read", "/nonexistent/x.har"], "/nonexistent/x.har")] {
            let (process, _, stderr) = try launch(arguments)
            try waitForExit(process)
            XCTAssertNotEqual(process.terminationStatus, 0, "\(arguments)")
            let text = try String(contentsOf: stderr, encoding: .utf8)
            XCTAssertTrue(text.contains(reason), "\(arguments): \(text)")
        }
    }

    func testCopyAsCurlReachesTheClipboardThroughOSC52() throws {
        let ui = try TmuxSession(name: #function)
        tmux = ui
        try ui.waitFor("listening on unix:\(ui.socketPath)")
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "POST", path: "/copy-me", status: 201)
        try ui.waitFor("/copy-me")
        ui.send("C")
        try ui.waitFor("curl command, sent to the clipboard")
        eventually { ui.clipboard().contains("/copy-me") }
        XCTAssertTrue(ui.clipboard().hasPrefix("curl --globoff --path-as-is"), "tmux buffer: \(ui.clipboard())")
        ui.send("q")
        try ui.waitFor("1/1 flows", where: { !$0.contains("curl command") })
    }

    func testReadOpensASavedSessionInTheUIAndExportWritesAHAR() throws {
        var log = EndToEnd.flow(1, method: "GET", path: "/from-file")
        log.apply(EndToEnd.finished(1, status: 200))
        let saved = directory.appendingPathComponent("session.jsonl").path
        try FlowLineWriter(path: saved).write(log)
        let ui = try TmuxSession(name: #function, arguments: ["--read", saved], listens: false)
        tmux = ui
        try ui.waitFor("/from-file")
        try ui.waitFor("Opened \(saved)")
        // W asks where, offering a stamped name; the person types another.
        ui.send("W")
        try ui.waitFor("Export the shown flows as HAR to: netinspect-")
        let path = directory.appendingPathComponent("exported.har").path
        ui.type(path)
        ui.send("Enter")
        try ui.waitFor("Wrote 1 flows to \(path)")
        // w the same way, for JSON lines; a C popup does not swallow it.
        ui.send("C")
        try ui.waitFor("curl command")
        ui.send("w")
        try ui.waitFor("Save the shown flows (JSON lines) to: netinspect-", where: { !$0.contains("curl command") })
        let lines = directory.appendingPathComponent("saved.jsonl").path
        ui.type(lines)
        ui.send("Enter")
        try ui.waitFor("Saved 1 flows to \(lines)")
        XCTAssertEqual(try FlowFile.read(path: lines).map(\.request.url), [log.request.url])
        XCTAssertEqual(try FlowFile.read(path: path).map(\.request.url), [log.request.url])
    }
}
