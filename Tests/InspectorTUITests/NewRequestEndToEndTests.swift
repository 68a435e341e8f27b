import Foundation
import InspectorCore
import TestSupport
import WireProtocol
import XCTest

@testable import InspectorTUI

/// The real `netinspect` binary in tmux, a real loopback server, and a
/// person's keys: `n` with `$EDITOR` (a script that writes the request, as
/// a person would) sends a new request, and `:replay.client` repeats a flow.
final class NewRequestEndToEndTests: XCTestCase {
    private var tmux: TmuxSession?
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("new-e2e-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        super.tearDown()
    }

    /// With no app connected, `n` opens the template; the "person" replaces
    /// it with a POST to the demo server, which netinspect sends itself; the
    /// new flow shows the server's answer and says it was composed.
    func testNSendsTheRequestWrittenInTheEditorAndItsAnswerIsAFlow() throws {
        let server = try DemoServer()
        defer { server.shutdown() }
        let editor = scratch.appendingPathComponent("write-request.sh")
        let script = """
            #!/bin/sh
            # The template is what opens; anything else fails the edit.
            grep -q '^GET https://example.com/ HTTP/1.1$' "$1" || exit 3
            cat > "$1" <<'REQUEST'
            POST http://127.0.0.1:\(server.port)/api/orders HTTP/1.1
            Content-Type: application/json

            {"sku":"tea-42"}
            REQUEST

            """
        try Data(script.utf8).write(to: editor)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: editor.path)

        let ui = try TmuxSession(name: #function, environment: ["EDITOR": editor.path, "VISUAL": ""])
        tmux = ui
        try ui.waitUntilListening()
        ui.send("n")
        var screen = try ui.waitFor(" 201 ", where: { $0.contains("✚ /api/orders") })
        XCTAssertTrue(screen.contains("1/1 flows"), screen)
        ui.send("Enter")
        screen = try ui.waitFor("a request you wrote, sent by netinspect itself")
        ui.send("2")
        screen = try ui.waitFor("HTTP 201 Created")
        XCTAssertTrue(screen.contains("\"received_bytes\""), "the server's answer to the written body:\n\(screen)")
        XCTAssertTrue(screen.contains("ord_"), screen)
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }

    /// A flow read from a HAR file, repeated three times two at a time by
    /// `:replay.client`: three new flows, each the server's answer.
    func testReplayClientRepeatsAFlowTheNumberOfTimesAsked() throws {
        let server = try DemoServer()
        defer { server.shutdown() }
        var log = NetworkLog(
            request: Request(method: "GET", url: "http://127.0.0.1:\(server.port)/api/users/7", headers: [HTTPHeader(name: "X-Request-ID", value: "rep")]),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_795_253_400), requestSent: 0.01, firstResponseByte: 0.02, finished: 0.03),
            state: .completed
        )
        log.response = Response(statusCode: 418, headers: [])
        let path = scratch.appendingPathComponent("one.har").path
        try HARFile.write([log], to: path)

        let ui = try TmuxSession(name: #function, arguments: ["--read", path], listens: false)
        tmux = ui
        try ui.waitFor(" 418 ")
        ui.send(":")
        ui.type("replay.client ~u /api/users/7 3 2")
        ui.send("Enter")
        let screen = try ui.waitFor("4/4 flows", where: { $0.components(separatedBy: " 200 ").count - 1 == 3 })
        XCTAssertEqual(screen.components(separatedBy: "↻").count - 1, 3, "three replays:\n\(screen)")
        ui.send("E")
        try ui.waitFor("Replay done: 3 sent: 3 finished, 0 failed")
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }
}
