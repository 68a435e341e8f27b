import Foundation
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// The real `netinspect` terminal UI in a tmux server of its own, for tests
/// where a person drives the inspector while this process is the app. (A
/// small counterpart of InspectorTUITests' `TmuxSession`: test targets
/// cannot share code.)
final class TmuxInspector {
    let socketPath: String
    private let session: String
    private let server: String
    private let tmux: String

    /// Starts `netinspect --listen unix:PATH` plus `arguments` in an 120x40
    /// pane, with `environment` added, and waits (at most 20 s) until it
    /// says it is listening.
    init(name: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        guard let tmux = paths.map({ "\($0)/tmux" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw XCTSkip("tmux is not installed; the end-to-end tests of the terminal UI need it")
        }
        let binary = InspectorProcess.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("netinspect binary not found at \(binary.path); build it with `swift build --build-tests`")
        }
        self.tmux = tmux
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        session = "rules-" + name.filter(\.isLetter).prefix(24) + "-" + unique
        server = "netinspect-agent-tests-\(unique)"
        socketPath = "/tmp/ni-tmux-\(unique).sock"
        let variables = environment.sorted { $0.key < $1.key }.flatMap { ["-e", "\($0.key)=\($0.value)"] }
        try run(["new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-e", "LANG=C.UTF-8", "-e", "TERM=tmux-256color"]
                + variables + [binary.path, "--listen", "unix:\(socketPath)"] + arguments
                + [";", "set-option", "-t", session, "remain-on-exit", "on"])
        try waitFor("listening on unix:\(socketPath)", timeout: 20)
    }

    deinit { kill() }

    /// Sends keys by tmux name (`Enter`, `Space`, `Escape`, `R`…).
    func send(_ keys: String...) {
        _ = try? run(["send-keys", "-t", session] + keys)
    }

    /// Types text literally.
    func type(_ text: String) {
        _ = try? run(["send-keys", "-t", session, "-l", text])
    }

    /// The netinspect process (the pane runs it directly, without a shell).
    var processID: pid_t {
        pid_t((try? run(["display-message", "-p", "-t", session, "#{pane_pid}"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    }

    /// The pane's text now.
    func capture() -> String {
        (try? run(["capture-pane", "-p", "-t", session])) ?? ""
    }

    /// Polls the screen until it contains `text`; generous by default, for a
    /// loaded machine. The screen returned read the same twice in a row (tmux
    /// can be read halfway through a redraw), or is the last of a few reads
    /// if it keeps changing.
    @discardableResult
    func waitFor(_ text: String, timeout: TimeInterval = 15) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = ""
        while Date() < deadline {
            screen = capture()
            if screen.contains(text) {
                for _ in 0..<4 {
                    usleep(50_000)
                    let next = capture()
                    if next == screen || !next.contains(text) { break }
                    screen = next
                }
                return screen
            }
            usleep(50_000)
        }
        throw TmuxError(text: "'\(text)' did not appear within \(timeout)s. Screen:\n\(screen)")
    }

    /// Ends the tmux server, and with it netinspect.
    func kill() {
        _ = try? run(["kill-server"])
        unlink(socketPath)
    }

    /// Runs tmux on our server with posix_spawn. Its output goes to a file,
    /// not a pipe, which the server that new-session starts would inherit
    /// and hold open.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let argv = [tmux, "-L", server, "-f", "/dev/null"] + arguments
        let output = NSTemporaryDirectory() + "ni-tmux-\(UUID().uuidString)"
        defer { unlink(output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        // The calling thread (a Swift concurrency or Dispatch worker) blocks
        // most signals, and a spawned program keeps that mask: the tmux
        // server it starts then never sees SIGCHLD or SIGTERM, outlives
        // kill-server, and leaks with the netinspect in its pane.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let spawned = posix_spawn(&pid, tmux, &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else { throw TmuxError(text: "cannot run tmux: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else { throw TmuxError(text: "tmux \(arguments.first ?? "") failed: \(text)") }
        return text
    }

    private struct TmuxError: Error, CustomStringConvertible {
        var text: String
        var description: String { text }
    }
}
