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
        try session.waitFor("listening on unix:\(session.socketPath)")
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
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw XCTSkip("no /dev/full on this system") }
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
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, FileManager.default.fileExists(atPath: ui.socketPath) || kill(pid, 0) == 0 {
            usleep(50_000)
        }
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

/// The binary under test in its own tmux server, so the user's tmux is untouched.
final class TmuxSession {
    let name: String
    let socketPath: String
    private let server: String

    static var binary: URL { NetinspectBinary.url }

    /// Starts `netinspect --listen unix:<socketPath>` followed by `arguments`
    /// (or, with `listens: false`, `netinspect` with `arguments` alone), with
    /// `environment` added to its own. With `fromAShell`, an interactive bash
    /// in the pane starts it as a job, so Ctrl-Z and `fg` work as in a
    /// person's terminal (``processID`` is then the shell's).
    init(name function: String, arguments: [String] = [], listens: Bool = true, width: Int = 120, height: Int = 40,
         environment: [String: String] = [:], fromAShell: Bool = false) throws {
        guard let tmux = Self.which("tmux") else { throw XCTSkip("tmux is not installed; the end-to-end tests need it") }
        let binary = Self.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw E2EError("netinspect binary not found at \(binary.path); build it with `swift build --build-tests`")
        }
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = "e2e-" + function.filter { $0.isLetter }.prefix(30) + "-" + unique
        socketPath = "/tmp/netinspect-e2e-\(unique).sock"
        // One server per session: a server exiting after the previous test's
        // kill-session must not race this test's new-session.
        server = "netinspect-tests-\(unique)"
        Self.tmuxPath = tmux
        let command = [binary.path] + (listens ? ["--listen", "unix:\(socketPath)"] : []) + arguments
        try run([
            "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)",
            "-e", "LANG=C.UTF-8", "-e", "TERM=tmux-256color",
            // Without Swift's backtracer a crash signal takes its default
            // action, so a crash sent with kill(2) ends the process as a real
            // fault would (the backtracer treats a sent signal as survivable).
            "-e", "SWIFT_BACKTRACE=enable=no",
        ] + environment.sorted { $0.key < $1.key }.flatMap { ["-e", "\($0.key)=\($0.value)"] } + (fromAShell ? ["/bin/bash", "--norc", "--noprofile", "-i", "+o", "history"] : command) + [
            ";", "set-option", "-t", name, "remain-on-exit", "on",
            // Accept OSC 52 from the program into tmux's paste buffer.
            ";", "set-option", "-g", "set-clipboard", "on",
        ])
        if fromAShell {
            type(command.map { "'\($0)'" }.joined(separator: " "))
            send("Enter")
        }
    }

    nonisolated(unsafe) private static var tmuxPath = "/usr/bin/tmux"

    private static func which(_ program: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let argv = [Self.tmuxPath, "-L", server, "-f", "/dev/null"] + arguments
        let (status, text) = try ProgramRun.run(argv)
        guard status == 0 else { throw E2EError("tmux \(arguments.joined(separator: " ")) failed (\(status)): \(text)") }
        return text
    }

    /// The pane's text now.
    func capture() -> String {
        (try? run(["capture-pane", "-p", "-t", name])) ?? ""
    }

    /// tmux's newest paste buffer: what the program last put on the clipboard with OSC 52.
    func clipboard() -> String {
        (try? run(["show-buffer"])) ?? ""
    }

    /// Sends keys by tmux name (`Enter`, `Tab`, `q`…).
    func send(_ keys: String...) {
        _ = try? run(["send-keys", "-t", name] + keys)
    }

    /// Types text literally.
    func type(_ text: String) {
        _ = try? run(["send-keys", "-t", name, "-l", text])
    }

    /// The netinspect process (the pane runs it directly, without a shell).
    var processID: pid_t {
        pid_t((try? run(["display-message", "-p", "-t", name, "#{pane_pid}"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    }

    /// Resizes the tmux window, which sends the program SIGWINCH.
    func resize(width: Int, height: Int) {
        _ = try? run(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Polls the screen until it contains `text` (and passes `condition`).
    /// tmux can be read while netinspect is halfway through drawing a screen
    /// (a title with no rows under it yet, seen under load), so the screen
    /// returned is one that read the same twice in a row, or the last of a
    /// few reads if it keeps changing (a live list).
    @discardableResult
    func waitFor(_ text: String, timeout: TimeInterval = 10, where condition: (String) -> Bool = { _ in true }) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = ""
        while Date() < deadline {
            screen = capture()
            if screen.contains(text), condition(screen) { return settled(screen) { $0.contains(text) && condition($0) } }
            usleep(50_000)
        }
        throw E2EError("'\(text)' did not appear within \(timeout)s. Screen:\n\(screen)")
    }

    /// The screen once it reads the same twice 50 ms apart (at most four
    /// more reads), as long as it still `matches`; else the last that did.
    private func settled(_ screen: String, matching matches: (String) -> Bool) -> String {
        var last = screen
        for _ in 0..<4 {
            usleep(50_000)
            let next = capture()
            guard matches(next) else { return last }
            if next == last { return next }
            last = next
        }
        return last
    }

    /// How the process ended.
    enum Exit: Equatable {
        case status(Int32)
        case signal(Int32)
        /// tmux saw the terminal close but never recorded a status; the
        /// process has exited all the same.
        case unknown

        /// Exited with status 0, or tmux could not tell.
        var isClean: Bool { self == .status(0) || self == .unknown }
    }

    /// Waits for the process to end.
    func waitForExit(timeout: TimeInterval = 10) throws -> Exit {
        let deadline = Date().addingTimeInterval(timeout)
        let pid = processID
        while Date() < deadline {
            let fields = (try? run(["display-message", "-p", "-t", name, "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"])) ?? ""
            let parts = fields.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 3, parts[0] == "1" {
                if let status = Int32(parts[1]) { return .status(status) }
                if let signal = Int32(parts[2]) { return .signal(signal) }
                if pid > 0, Self.hasExited(pid) { return .unknown }
            }
            usleep(50_000)
        }
        throw E2EError("netinspect did not exit within \(timeout)s. Screen:\n\(capture())")
    }

    /// Whether a process is gone or a zombie (tmux 3.3a sometimes leaves
    /// the pane's process unreaped when it sees the terminal close first).
    private static func hasExited(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return true }
        return status.contains("State:\tZ")
    }

    /// Kills the tmux server, which hangs up the pane's terminal (SIGHUP),
    /// and leaves the socket file to the program under test.
    func closeTerminal() {
        _ = try? run(["kill-server"])
    }

    func kill() {
        _ = try? run(["kill-session", "-t", name])
        try? FileManager.default.removeItem(atPath: socketPath)
    }
}

struct E2EError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
