import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// The real `netinspect` terminal UI in a tmux server of its own, for tests
/// where a person drives the inspector while this process is the app. (A
/// small counterpart of InspectorTUITests' `TmuxSession`; both run tmux
/// through TestSupport's `ProgramRun`.)
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

    /// Runs tmux on our server.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let (status, text) = try ProgramRun.run([tmux, "-L", server, "-f", "/dev/null"] + arguments)
        guard status == 0 else { throw TmuxError(text: "tmux \(arguments.first ?? "") failed: \(text)") }
        return text
    }

    private struct TmuxError: Error, CustomStringConvertible {
        var text: String
        var description: String { text }
    }
}
