import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Breakpoints as a person uses them: the real `netinspect` in tmux, `i` to
/// set the filter, `e` to edit a held request in `$EDITOR` (a script that
/// edits the file, as a person would), `X` to kill; an app in this process
/// with a captured session; a real loopback server.
final class BreakpointEndToEndTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!
    private var pane: TmuxSession?
    private var scratch: URL!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("bp-e2e-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        pane?.kill()
        server?.shutdown()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    private struct Outcome: Sendable {
        var body: Data?
        var status: Int?
        var error: URLError?
    }

    private func fetch(_ request: URLRequest, on session: URLSession) -> (URLSessionDataTask, Locked<Outcome?>, DispatchSemaphore) {
        let outcome = Locked<Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { data, response, error in
            outcome.withLock { $0 = Outcome(body: data, status: (response as? HTTPURLResponse)?.statusCode, error: error as? URLError) }
            done.signal()
        }
        task.resume()
        return (task, outcome, done)
    }

    private func request(_ path: String) -> URLRequest {
        var request = URLRequest(url: server.url(path))
        request.httpMethod = "POST"
        request.httpBody = Data("order=7".utf8)
        request.setValue("Bearer s3cret", forHTTPHeaderField: "Authorization")
        request.setValue("original", forHTTPHeaderField: "X-Trace")
        return request
    }

    func testAPersonEditsAHeldRequestKillsAnotherAndTheAppGoesOnWhenNetinspectDies() throws {
        // The "person" at the editor: changes the body and one header, leaves the redacted one alone.
        let editor = scratch.appendingPathComponent("edit.sh")
        try Data("#!/bin/sh\nsed -i 's/order=7/order=8/; s/^X-Trace: original$/X-Trace: edited/' \"$1\"\n".utf8).write(to: editor)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: editor.path)
        let pane = try TmuxSession(name: #function, environment: ["EDITOR": editor.path, "VISUAL": ""])
        try pane.waitUntilListening()
        self.pane = pane
        let socket = pane.socketPath

        let agent = try CaptureAgent.start(.init(destination: .unix(path: socket)) {
            $0.allowsControl = true
            $0.initialConnectionWait = 5
        })
        defer { agent.stop() }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        try pane.waitFor("1 agent")

        pane.send("i")
        pane.type("~u /echo & ~q")
        pane.send("Enter")
        try pane.waitFor("intercept: ~u /echo & ~q")
        XCTAssertTrue(eventually { agent.breakpoints.isActive }, "netinspect sent the filter")

        // 1. Held, edited in $EDITOR, resumed with the edit.
        let (_, edited, editedDone) = fetch(request("/echo?n=1"), on: session)
        try pane.waitFor("HELD")
        XCTAssertEqual(server.requests.count, 0, "held: nothing reached the server")
        pane.send("Enter")
        try pane.waitFor("at a breakpoint before its request is sent")
        pane.send("e")
        XCTAssertEqual(editedDone.wait(timeout: .now() + 20), .success, pane.capture())
        XCTAssertEqual(edited.current?.status, 200)
        XCTAssertEqual(edited.current?.body, Data("order=8".utf8), "the app got the server's answer to the edited request")
        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.body, Array("order=8".utf8))
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-trace" }?.value, "edited")
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret",
                       "the redacted value came back from the agent, not from the screen")
        try pane.waitFor("Edited")
        XCTAssertFalse(pane.capture().contains("s3cret"), "the secret never reaches the screen")

        // 2. Held, then killed: the app sees a cancellation.
        pane.send("q")
        let (killedTask, killed, killedDone) = fetch(request("/echo?n=2"), on: session)
        XCTAssertTrue(eventually { agent.breakpoints.heldCount == 1 })
        try pane.waitFor("HELD")
        pane.send("X")
        XCTAssertEqual(killedDone.wait(timeout: .now() + 10), .success, pane.capture())
        XCTAssertEqual(killed.current?.error?.code, .cancelled)
        XCTAssertEqual((killedTask.error as? URLError)?.code, .cancelled)
        XCTAssertEqual(server.requests.count, 1, "the killed request never went out")

        // 3. Held, then netinspect dies: the request goes on unmodified.
        let (_, orphan, orphanDone) = fetch(request("/echo?n=3"), on: session)
        XCTAssertTrue(eventually { agent.breakpoints.heldCount == 1 })
        let died = Date()
        kill(pane.processID, SIGKILL)
        XCTAssertEqual(orphanDone.wait(timeout: .now() + 10), .success)
        let elapsed = Date().timeIntervalSince(died)
        print("held request went on \(String(format: "%.3f", elapsed)) s after netinspect was killed")
        XCTAssertLessThan(elapsed, 1.5, "within a second (the margin is for a loaded machine)")
        XCTAssertEqual(orphan.current?.body, Data("order=7".utf8), "unmodified")
        XCTAssertEqual(server.requests.last?.uri, "/echo?n=3")
    }
}
