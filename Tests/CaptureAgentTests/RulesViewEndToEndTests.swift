import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// The rules view end to end: a person types keys into the real `netinspect`
/// terminal UI (in tmux), this process is the app with a real agent that
/// allows control and a captured URLSession, and two real loopback servers
/// record what reaches them.
final class RulesViewEndToEndTests: XCTestCase, @unchecked Sendable {
    private var serverA: TestHTTPServer!
    private var serverB: TestHTTPServer!
    private var scratch: URL!
    private var ui: TmuxSession?
    private var agent: CaptureAgent?
    private var session: URLSession?

    override func setUpWithError() throws {
        serverA = try TestHTTPServer()
        serverB = try TestHTTPServer()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rulesview-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        session?.finishTasksAndInvalidate()
        agent?.stop()
        ui?.kill()
        serverA?.shutdown()
        serverB?.shutdown()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// The app: an agent that allows control, started now, and a session it captures.
    private func startApp(on path: String) throws -> (CaptureAgent, URLSession) {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) {
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
        return (agent, session)
    }

    private var mapToB: String { "map-remote |127.0.0.1:\(serverA.port)|127.0.0.1:\(serverB.port)" }

    /// Types a rule into the view's prompt, which must be open, and waits until it is added.
    private func add(_ rule: String, in ui: TmuxSession) throws {
        ui.send("a")
        try ui.waitFor("New rule (KIND SPEC):")
        ui.type(rule)
        ui.send("Enter")
        try ui.waitFor("Added \(rule)")
    }

    func testARuleAddedInTheViewMapsTheNextRequestAndSwitchedOffNoLonger() throws {
        let rulesFile = scratch.appendingPathComponent("rules.txt")
        try "# the team's rules\nmodify-headers /X-Env/staging\n".write(to: rulesFile, atomically: true, encoding: .utf8)
        let ui = try TmuxSession(name: #function, arguments: ["--rules", rulesFile.path])
        try ui.waitUntilListening()
        self.ui = ui
        let (agent, session) = try startApp(on: ui.socketPath)
        try ui.waitFor("│ 1 agent")

        let (before, _) = fetch(URLRequest(url: serverA.url("/text?before")), on: session)
        XCTAssertEqual(before.status, 200)
        XCTAssertEqual(serverA.requests.map(\.uri), ["/text?before"])
        XCTAssertEqual(serverA.requests.first?.headers.first { $0.name.lowercased() == "x-env" }?.value, "staging", "the file's rule is in force")

        ui.send("R")
        try ui.waitFor("the connected app allows control")
        ui.send("a")
        ui.type("map-rmote |nope|x")
        ui.send("Enter")
        var screen = try ui.waitFor("KIND one of map-remote")
        XCTAssertTrue(screen.contains("New rule (KIND SPEC): map-rmote |nope|x"), "bad input is kept for fixing:\n\(screen)")
        ui.send("C-u")
        ui.type(mapToB)
        ui.send("Enter")
        screen = try ui.waitFor("Added \(mapToB)")
        XCTAssertTrue(screen.contains("sent to 1 agent that accepts control"), screen)
        // The push travels on the agent's socket; the screen shows it was sent, not that it arrived.
        XCTAssertTrue(eventually { agent.rules.rules.count == 2 }, "the agent never got the new rules")

        let (mapped, _) = fetch(URLRequest(url: serverA.url("/text?mapped")), on: session)
        XCTAssertEqual(mapped.status, 200)
        XCTAssertEqual(serverB.requests.map(\.uri), ["/text?mapped"], "the next request goes to server B")
        XCTAssertEqual(serverA.requests.count, 1)
        XCTAssertEqual(try String(contentsOf: rulesFile, encoding: .utf8),
                       "# the team's rules\nmodify-headers /X-Env/staging\n\(mapToB)\n")
        try ui.waitFor("Saved to \(rulesFile.path)")

        ui.send("j")
        ui.send("Space")
        try ui.waitFor("Switched off \(mapToB)")
        XCTAssertTrue(eventually { agent.rules.rules.count == 1 }, "the agent still has the rule that was switched off")
        let (off, _) = fetch(URLRequest(url: serverA.url("/text?off")), on: session)
        XCTAssertEqual(off.status, 200)
        XCTAssertEqual(serverA.requests.map(\.uri), ["/text?before", "/text?off"], "switched off: to server A again")
        XCTAssertEqual(serverB.requests.count, 1)
        XCTAssertEqual(try String(contentsOf: rulesFile, encoding: .utf8),
                       "# the team's rules\nmodify-headers /X-Env/staging\n# off: \(mapToB)\n", "kept in the file, marked off")

        ui.send("k")
        ui.send("d")
        try ui.waitFor("Delete rule 1, modify-headers /X-Env/staging? (y/n)")
        ui.send("y")
        try ui.waitFor("Deleted modify-headers /X-Env/staging")
        XCTAssertTrue(eventually { agent.rules.rules.isEmpty })
        _ = fetch(URLRequest(url: serverA.url("/text?plain")), on: session)
        XCTAssertNil(serverA.requests.last?.headers.first { $0.name.lowercased() == "x-env" }, "the deleted header rule is gone")
        XCTAssertEqual(try String(contentsOf: rulesFile, encoding: .utf8), "# the team's rules\n# off: \(mapToB)\n")
    }

    /// With no --rules file: the view says changes stay in memory, and an
    /// app that starts afterwards gets the rules as they are now, for its
    /// very first request.
    func testARuleAddedInTheViewReachesAnAgentThatConnectsAfterwards() throws {
        let ui = try TmuxSession(name: #function)
        try ui.waitUntilListening()
        self.ui = ui
        ui.send("R")
        try ui.waitFor("Not saved: netinspect started without --rules FILE")
        try add(mapToB, in: ui)
        try ui.waitFor("sent to 0 agents that accept control")

        let (_, session) = try startApp(on: ui.socketPath)
        let (first, _) = fetch(URLRequest(url: serverA.url("/text?first")), on: session)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(serverB.requests.map(\.uri), ["/text?first"], "the first request already obeys the rule added before the app started")
        XCTAssertEqual(serverA.requests.count, 0)
        try ui.waitFor("the connected app allows control")
    }
}
