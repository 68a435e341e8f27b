import Foundation
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `netinspect` binary in a detached tmux session, feeds it
/// flows over a real Unix socket, and reads the screen with `capture-pane`.
final class EndToEndTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    private func start(_ function: String = #function, arguments: [String] = []) throws -> TmuxSession {
        let session = try TmuxSession(name: function, arguments: arguments)
        tmux = session
        try session.waitUntilListening()
        return session
    }

    /// Starts netinspect, connects an agent and waits for its first flow (id 1).
    private func startWithAFlow(at path: String, _ function: String = #function) throws -> (TmuxSession, WireClient) {
        let ui = try start(function)
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: path, status: 200)
        try ui.waitFor(path)
        return (ui, agent)
    }

    func testFlowsAppearFilterAndOpenInDetail() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: "/alpha", status: 200)
        try agent.sendFlow(2, method: "POST", path: "/beta", status: 503)
        try agent.sendFlow(3, method: "GET", path: "/gamma", status: nil)
        var screen = try ui.waitFor("/gamma")
        XCTAssertTrue(screen.contains("/alpha") && screen.contains("/beta"), screen)
        XCTAssertTrue(screen.contains("3/3 flows"), screen)

        ui.send("/")
        ui.type("beta")
        ui.send("Enter")
        screen = try ui.waitFor("1/3 flows")
        XCTAssertFalse(screen.contains("/alpha"), screen)

        ui.send("c")
        try ui.waitFor("3/3 flows")
        ui.send("f")
        ui.type("~c 5xx")
        ui.send("Enter")
        screen = try ui.waitFor("filter: ~c 5xx")
        XCTAssertTrue(screen.contains("/beta"), screen)
        XCTAssertFalse(screen.contains("/gamma"), screen)

        ui.send("Enter")
        screen = try ui.waitFor("X-Request-Id: e2e-2")
        XCTAssertTrue(screen.contains("1 Request"), screen)
        ui.send("Tab")
        screen = try ui.waitFor("HTTP 503 Service Unavailable")
        XCTAssertTrue(screen.contains(#""retry": true"#), "JSON body pretty-printed:\n\(screen)")
        ui.send("Tab")
        try ui.waitFor("Waterfall")
        ui.send("Escape")
        try ui.waitFor("Dur")
    }

    func testTwoAgentsAddTheAppColumn() throws {
        let (ui, first) = try startWithAFlow(at: "/one")
        let second = try WireClient(path: ui.socketPath)
        try second.send(.hello(Hello(agentName: "CaptureAgent", agentVersion: "0.1.0", appName: "billing", processID: 2, hostName: "test")))
        try second.sendFlow(2, method: "GET", path: "/two", status: 200)
        try ui.waitFor("/two")
        let screen: String
        do {
            screen = try ui.waitFor("2 agents")
        } catch {
            ui.send("E")
            return XCTFail("\(error)\nEvent log:\n\(try ui.waitFor("Event log"))")
        }
        XCTAssertTrue(screen.contains(" App ") && screen.contains("billing") && screen.contains("e2e-app"), screen)
        withExtendedLifetime(first) {}
    }

    func testNewFlowsUpdateInPlace() throws {
        let ui = try start()
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.send(.flowStarted(EndToEnd.flow(7, method: "PUT", path: "/slow")))
        try ui.waitFor("/slow")
        try agent.send(.flowFinished(EndToEnd.finished(7, status: 201)))
        let screen = try ui.waitFor(" 201 ")
        XCTAssertTrue(screen.contains("1/1 flows"), screen)
    }

    func testGarbageConnectionShowsAnErrorAndTheUISurvives() throws {
        let (ui, agent) = try startWithAFlow(at: "/before")

        let garbage = try WireClient(path: ui.socketPath)
        try garbage.write(Data("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        try ui.waitFor("rejected connection")

        try agent.sendFlow(2, method: "GET", path: "/after", status: 200)
        let screen = try ui.waitFor("/after")
        XCTAssertTrue(screen.contains("2/2 flows"), screen)
    }

    /// `--save` to a full disk: the first finished flow cannot be written,
    /// the notice line says so, and netinspect keeps showing flows and
    /// taking keys (open a flow, back, quit).
    func testSaveToAFullDiskShowsTheErrorAndKeepsRunning() throws {
        // Every Linux has /dev/full (devtmpfs, and containers' default /dev).
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw Prerequisite("no /dev/full on this system") }
        let ui = try start(arguments: ["--save", "/dev/full"])
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: "/first", status: 200)
        var screen = try ui.waitFor("--save /dev/full")
        XCTAssertTrue(screen.contains("no longer saving"), screen)
        XCTAssertTrue(screen.contains("/first"), screen)

        try agent.sendFlow(2, method: "POST", path: "/second", status: 201)
        screen = try ui.waitFor("2/2 flows")
        XCTAssertTrue(screen.contains("/second"), screen)
        ui.send("Enter")
        try ui.waitFor("X-Request-Id: e2e-")
        ui.send("Escape")
        try ui.waitFor("Dur")
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }

    /// `--save` where no file can be created: netinspect starts anyway, the
    /// notice and the event log say why, and flows are shown (not saved).
    func testSaveToAnUnwritablePathShowsTheErrorAndKeepsRunning() throws {
        // A missing directory fails for everyone; sysfs refuses new files
        // even to root (tests here often run as root, past file modes).
        for (index, path) in ["/nonexistent-netinspect-dir/flows.jsonl", "/sys/netinspect-e2e.jsonl"].enumerated() {
            // The error takes the notice line that "listening on" would have.
            let ui = try TmuxSession(name: "\(#function)-\(index)", arguments: ["--save", path])
            tmux = ui
            var screen = try ui.waitFor("--save \(path): cannot create the file")
            XCTAssertTrue(screen.contains("not saving"), screen)
            let agent = try WireClient(agentOn: ui.socketPath)
            try agent.sendFlow(1, method: "GET", path: "/unsaved", status: 200)
            screen = try ui.waitFor("/unsaved")
            XCTAssertTrue(screen.contains("1/1 flows"), screen)
            ui.send("E")
            try ui.waitFor("cannot create the file")
            ui.send("Escape")
            ui.send("Q")
            XCTAssertTrue(try ui.waitForExit().isClean)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
            // tearDown ends only the last session; the first one's tmux server outlived every run.
            ui.kill()
        }
    }

    func testResizeRedrawsForTheNewSize() throws {
        let (ui, agent) = try startWithAFlow(at: "/resized")
        ui.resize(width: 80, height: 24)
        let screen = try ui.waitFor("?:help", where: { $0.split(separator: "\n", omittingEmptySubsequences: false).count <= 25 })
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertTrue(lines.contains { $0.contains("/resized") }, screen)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 80 }, screen)
        XCTAssertTrue(lines[23].contains("1/1 flows"), "status bar on the last row:\n\(screen)")
        withExtendedLifetime(agent) {}
    }

    func testQuitRestoresTheTerminalAndRemovesTheSocket() throws {
        let ui = try start()
        ui.send("Q")
        let exit = try ui.waitForExit()
        XCTAssertTrue(exit.isClean, "\(exit)")
        XCTAssertFalse(ui.capture().contains("flows │"), "the alternate screen was left:\n\(ui.capture())")
        XCTAssertFalse(FileManager.default.fileExists(atPath: ui.socketPath), "socket file left behind")
    }

    func testSIGTERMRestoresTheTerminalAndRemovesTheSocket() throws {
        let ui = try start()
        XCTAssertEqual(kill(ui.processID, SIGTERM), 0)
        let exit = try ui.waitForExit()
        XCTAssertTrue(exit.isClean, "SIGTERM should leave through the normal cleanup, not die of it: \(exit)")
        XCTAssertFalse(ui.capture().contains("flows │"), ui.capture())
        XCTAssertFalse(FileManager.default.fileExists(atPath: ui.socketPath), "socket file left behind")
    }

    func testClosingTheTerminalEndsNetinspectAndRemovesTheSocket() throws {
        let ui = try start()
        let pid = ui.processID
        ui.closeTerminal()
        eventually { !FileManager.default.fileExists(atPath: ui.socketPath) && kill(pid, 0) != 0 }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ui.socketPath), "socket file left behind after SIGHUP")
        XCTAssertNotEqual(kill(pid, 0), 0, "netinspect still runs after its terminal closed")
    }

    func testACrashSignalStillLeavesTheAlternateScreen() throws {
        let ui = try start()
        XCTAssertEqual(kill(ui.processID, SIGSEGV), 0)
        let exit = try ui.waitForExit()
        XCTAssertNotEqual(exit, .status(0), "the crash must still end the process as a crash")
        XCTAssertFalse(ui.capture().contains("flows │"), "the alternate screen was left:\n\(ui.capture())")
    }
}

// MARK: - Helpers

enum EndToEnd {
    /// netinspect in tmux; with `listens`, once it says it is listening.
    static func start(_ function: String, arguments: [String] = [], listens: Bool = true) throws -> TmuxSession {
        let session = try TmuxSession(name: function, arguments: arguments, listens: listens)
        if listens { try session.waitUntilListening() }
        return session
    }

    /// A path in the temporary directory no other test uses.
    static func temporaryPath(_ suffix: String) -> String {
        NSTemporaryDirectory() + "netinspect-e2e-\(UUID().uuidString)\(suffix)"
    }

    static let hello = Hello(agentName: "CaptureAgent", agentVersion: "0.1.0", appName: "e2e-app", processID: 1, hostName: "test")

    static func id(_ number: Int) -> FlowID {
        FlowID(String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    static func flow(_ number: Int, method: String, path: String) -> NetworkLog {
        NetworkLog(
            id: id(number),
            request: Request(method: method, url: "http://127.0.0.1:8080\(path)", headers: [HTTPHeader(name: "X-Request-Id", value: "e2e-\(number)")]),
            timing: Timing(startedAt: Date())
        )
    }

    static func finished(_ number: Int, status: Int) -> FlowFinished {
        FlowFinished(
            id: id(number),
            state: .completed,
            response: Response(
                statusCode: status,
                headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                body: CapturedBody(data: Data(#"{"status":\#(status),"retry":true}"#.utf8)),
                mimeType: "application/json"
            ),
            timing: Timing(startedAt: Date(), requestSent: 0.001, firstResponseByte: 0.02, finished: 0.025)
        )
    }
}

/// A minimal agent: a Unix socket that writes frames.
final class WireClient {
    private let descriptor: Int32
    private let encoder = FrameEncoder()

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            // deinit closes the descriptor: init has initialised everything.
            throw E2EError("cannot connect to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Connects and says hello, as an agent does.
    convenience init(agentOn path: String) throws {
        try self.init(path: path)
        try send(.hello(EndToEnd.hello))
    }

    /// Closes as an agent does (see `TestAgent.close()`): a close with
    /// receipts unread would be a reset, logged as an error.
    deinit {
        shutdown(descriptor, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while recv(descriptor, &buffer, buffer.count, 0) > 0 {}
        close(descriptor)
    }

    func send(_ message: Message) throws {
        try write(try encoder.encode(message))
    }

    func sendFlow(_ number: Int, method: String, path: String, status: Int?) throws {
        try send(.flowStarted(EndToEnd.flow(number, method: method, path: path)))
        if let status { try send(.flowFinished(EndToEnd.finished(number, status: status))) }
    }

    func write(_ data: Data) throws {
        let written = data.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard written == data.count else { throw E2EError("short write: \(written) of \(data.count)") }
    }
}

struct E2EError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
