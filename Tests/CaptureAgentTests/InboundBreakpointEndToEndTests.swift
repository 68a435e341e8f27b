// Built with the Hummingbird and AsyncHTTPClient traits (on by default; Package.swift).
#if Hummingbird && AsyncHTTPClient
import Foundation
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Breakpoints on a service's inbound requests as a person uses them: the
/// real `netinspect` in tmux, `i` to hold the requests a route receives, `e`
/// to edit one in `$EDITOR` before the handler sees it, `X` to kill another;
/// a Hummingbird service in this process with inbound capture; AsyncHTTPClient
/// as its client.
final class InboundBreakpointEndToEndTests: XCTestCase, @unchecked Sendable {
    private var pane: TmuxSession?
    private var service: (any InboundService)?
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("inbound-bp-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        await service?.stop()
        pane?.kill()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    func testAPersonEditsAReceivedRequestBeforeItsHandlerAndKillsAnother() async throws {
        // The "person" at the editor changes the request body.
        let editor = scratch.appendingPathComponent("edit.sh")
        try Data("#!/bin/sh\nsed -i 's/order=7/order=8/' \"$1\"\n".utf8).write(to: editor)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: editor.path)
        let pane = try TmuxSession(name: #function, environment: ["EDITOR": editor.path, "VISUAL": ""])
        try pane.waitUntilListening()
        self.pane = pane
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) {
            $0.allowsControl = true
            $0.initialConnectionWait = 5
        })
        defer { agent.stop() }
        let service = try await InboundFramework.hummingbird.start(captureInto: agent)
        self.service = service
        _ = try pane.waitFor("1 agent")

        pane.send("i")
        pane.type("~inbound & ~u /echo & ~q")
        pane.send("Enter")
        _ = try pane.waitFor("intercept: ~inbound & ~u /echo & ~q")
        let intercepting = await waitUntil { agent.breakpoints.isActive }
        XCTAssertTrue(intercepting, "netinspect sent the filter")
        let url = "http://127.0.0.1:\(service.port)/echo"

        // 1. Held before the handler, edited, and the handler gets the edit.
        let edited = Task { try await ClientView.fetch(.POST, url + "?n=1", body: Array("order=7".utf8)) }
        _ = try pane.waitFor("HELD")
        XCTAssertEqual(service.handlerRuns, 0, "held: the handler has not run")
        pane.send("Enter")
        _ = try pane.waitFor("before the app's handler runs")
        _ = try pane.waitFor("order=7")
        pane.send("e")
        let answer = try await edited.value
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.body, Array("order=8".utf8), "the handler read the edited body and echoed it")
        XCTAssertEqual(service.handlerRuns, 1)
        _ = try pane.waitFor("Edited")

        // 2. Held, then killed: the handler never runs, the client is refused.
        pane.send("q")
        let killed = Task { try await ClientView.fetch(.POST, url + "?n=2", body: Array("order=9".utf8)) }
        let heldOnce = await waitUntil { agent.breakpoints.heldCount == 1 }
        XCTAssertTrue(heldOnce)
        _ = try pane.waitFor("HELD")
        pane.send("X")
        let refused = try await killed.value
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(service.handlerRuns, 1, "the killed request never reached its handler")
        _ = try pane.waitFor("CXL")
    }
}
#endif
