#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

@testable import InspectorTUI

/// The real `netinspect` binary in tmux: replay by netinspect's own client
/// from a HAR file against a loopback server, and the demo as README's
/// "Try it" describes it.
final class OwnReplayEndToEndTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    /// A flow read from a HAR file has no app to replay it: `r` says so and
    /// netinspect sends it itself; the loopback server answers (it echoes
    /// the request's X-Request-ID, so the answer proves what was sent).
    func testReplayingAFlowOfAHARFileSendsItWithNetinspectsOwnClient() throws {
        let server = try DemoServer()
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/api/users?page=3"
        var log = NetworkLog(
            request: Request(method: "GET", url: url, headers: [HTTPHeader(name: "X-Request-ID", value: "har-replay-1")]),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_795_253_400), requestSent: 0.01, firstResponseByte: 0.02, finished: 0.03),
            state: .completed
        )
        log.response = Response(statusCode: 418, headers: [])
        let path = NSTemporaryDirectory() + "netinspect-replay-\(UUID().uuidString).har"
        try HARFile.write([log], to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }

        let ui = try TmuxSession(name: #function, arguments: ["--read", path], listens: false)
        tmux = ui
        try ui.waitFor(" 418 ")
        ui.send("r")
        var screen = try ui.waitFor(" 200 ", where: { $0.contains("↻") })
        XCTAssertTrue(screen.contains("This flow came from a file, not a live app: netinspect sent GET /api/users?page=3 itself"), screen)
        XCTAssertTrue(screen.contains("2/2 flows"), screen)
        ui.send("G")
        ui.send("Enter")
        screen = try ui.waitFor("sent again by netinspect itself")
        ui.send("2")
        screen = try ui.waitFor("HTTP 200 OK")
        XCTAssertTrue(screen.range(of: "X-Request-I[dD]: har-replay-1", options: .regularExpression) != nil,
                      "the server echoed the header netinspect sent:\n\(screen)")
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }

    /// README's "Try it": `netinspect --demo` starts while another
    /// netinspect listens on the default socket, on a socket of its own,
    /// and removes that socket when it quits.
    func testTheDemoStartsWhileAnotherNetinspectHoldsTheDefaultSocket() throws {
        let inbox = Inbox()
        let other = InspectorListener(configuration: ListenerConfiguration(endpoints: [Endpoint.defaultEndpoint()]), inbox: inbox)
        // Someone else's netinspect may hold it already: either way it is taken.
        _ = try? other.start()
        defer { other.shutdown() }
        guard case .unix(let defaultPath) = Endpoint.defaultEndpoint() else { return XCTFail("the default is a Unix socket") }
        XCTAssertNoThrow(try WireClient(path: defaultPath), "the default socket is held")

        let ui = try TmuxSession(name: #function, arguments: ["--demo"], listens: false)
        tmux = ui
        let screen = try ui.waitFor(" 404 ", where: { $0.contains(" 500 ") })
        guard case .unix(let demoPath) = Netinspect.demoEndpoint(processID: ui.processID) else { return XCTFail() }
        XCTAssertTrue(screen.contains(DemoWorkload.appName), screen)
        XCTAssertTrue(FileManager.default.fileExists(atPath: demoPath), "the demo listens on \(demoPath)")
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
        XCTAssertFalse(FileManager.default.fileExists(atPath: demoPath), "socket file left behind")
    }

    /// The demo app allows control: a breakpoint holds its next POST, `A`
    /// resumes it, and `r` has the app's agent replay a flow.
    func testTheDemoHoldsAtABreakpointAndReplays() throws {
        let ui = try TmuxSession(name: #function, arguments: ["--demo"])
        tmux = ui
        try ui.waitFor("/api/users")
        ui.send("i")
        // As README's "Try it" says; the demo sends a POST every few seconds.
        ui.type("~m POST")
        ui.send("Enter")
        var screen = try ui.waitFor("HELD", timeout: 30)
        XCTAssertFalse(screen.contains("without control"), screen)
        ui.send("A")
        screen = try ui.waitFor("Resumed")
        ui.send("I")
        // The footer says breakpoints are off once `I` took effect. Its
        // notice may already be gone: a response the agent held before it
        // learned (the resumed POSTs') still arrives, and its "is held"
        // notice takes the line.
        try ui.waitFor("flows │", where: { !$0.contains("intercept:") })
        ui.send("g")
        ui.send("r")
        screen = try ui.waitFor("to replay")
        XCTAssertTrue(screen.contains("Asked \(DemoWorkload.appName) to replay"), screen)
        // Follow again, so the replay (the newest flow) is in view however long the list.
        ui.send("F")
        try ui.waitFor("↻", timeout: 20)
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }
}
