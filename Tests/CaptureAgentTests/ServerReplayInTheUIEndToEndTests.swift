import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Server replay from the command bar, as a person does it in the real
/// `netinspect` UI (in tmux): record with `--save`, type `:replay.server
/// FILE`, and the app's next requests are answered from the recording with
/// nothing sent to the server; `:replay.server.stop` sends them to it again.
final class ServerReplayInTheUIEndToEndTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!
    private var scratch: URL!
    private var ui: TmuxSession?
    private var agent: CaptureAgent?
    private var session: URLSession?

    override func setUpWithError() throws {
        server = try TestHTTPServer()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("replay-ui-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        session?.finishTasksAndInvalidate()
        agent?.stop()
        ui?.kill()
        server?.shutdown()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    func testAReplayStartedFromTheCommandBarAnswersTheAppUntilItIsStopped() throws {
        let saved = scratch.appendingPathComponent("recorded.jsonl").path
        let ui = try TmuxSession(name: #function, arguments: ["--save", saved])
        try ui.waitUntilListening()
        self.ui = ui
        let agent = try CaptureAgent.start(.init(destination: .unix(path: ui.socketPath)) {
            $0.allowsControl = true
            $0.flushTimeout = 1
            $0.initialConnectionWait = 10
        })
        self.agent = agent
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        self.session = session
        try ui.waitFor("│ 1 agent")

        let urls = [server.url("/text?first"), server.url("/binary/100")]
        let live = urls.map { fetch(URLRequest(url: $0), on: session).outcome.body }
        try ui.waitFor("2/2 flows")
        XCTAssertTrue(eventually { ((try? String(contentsOfFile: saved, encoding: .utf8)) ?? "").split(separator: "\n").count == 2 },
                      "--save wrote both flows")
        _ = server.takeRequests()

        ui.send(":")
        ui.type("replay.server \(saved)")
        ui.send("Enter")
        try ui.waitFor("replay: 2 left")
        XCTAssertTrue(eventually { agent.serverReplay.isActive }, "the agent has the book: \(ui.capture())")
        let replayed = urls.map { fetch(URLRequest(url: $0), on: session).outcome.body }
        XCTAssertEqual(replayed, live, "answered as recorded")
        XCTAssertEqual(server.takeRequests().count, 0, "nothing reached the server")
        var screen = try ui.waitFor("replay: 0 left")
        XCTAssertEqual(screen.components(separatedBy: "≈").count - 1, 2, "both replayed flows are marked in the list:\n\(screen)")

        ui.send(":")
        ui.type("replay.server.stop")
        ui.send("Enter")
        _ = try ui.waitFor("1 agent") { !$0.contains("replay:") }
        _ = fetch(URLRequest(url: urls[0]), on: session)
        XCTAssertEqual(server.takeRequests().map(\.uri), ["/text?first"], "after the stop the request reaches the server")
        screen = try ui.waitFor("5/5 flows")
        XCTAssertEqual(screen.components(separatedBy: "≈").count - 1, 2, "the flow after the stop is not marked:\n\(screen)")
    }
}
