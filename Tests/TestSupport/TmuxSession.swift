#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The real `netinspect` in a tmux server of its own (the user's tmux is
/// untouched), driven as a person drives it: keys in, the screen read back
/// with `capture-pane`.
///
/// ```swift
/// let ui = try TmuxSession(name: #function, arguments: ["--demo"], listens: false)
/// defer { ui.kill() }
/// try ui.waitFor("flows")
/// ui.send("Enter")
/// ```
public final class TmuxSession {
    /// The tmux session's name.
    public let name: String
    /// Where netinspect listens when the session `listens` (`--listen unix:PATH`).
    public let socketPath: String
    private let server: String
    private let tmux: String

    /// Starts `netinspect --listen unix:<socketPath>` followed by `arguments`
    /// (or, with `listens: false`, `netinspect` with `arguments` alone), with
    /// `environment` added to its own. With `fromAShell`, an interactive bash
    /// in the pane starts it as a job, so Ctrl-Z and `fg` work as in a
    /// person's terminal (``processID`` is then the shell's). Throws
    /// ``Prerequisite`` when tmux or the binary is missing; does not wait for anything (see
    /// ``waitUntilListening(timeout:)``).
    public init(name function: String, arguments: [String] = [], listens: Bool = true, width: Int = 120, height: Int = 40,
                environment: [String: String] = [:], fromAShell: Bool = false) throws {
        let tmux = try Prerequisite.tool("tmux", installedBy: "apt-get install tmux")
        let binary = try Prerequisite.netinspect()
        self.tmux = tmux
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = "e2e-" + function.filter { $0.isLetter }.prefix(30) + "-" + unique
        socketPath = "/tmp/netinspect-e2e-\(unique).sock"
        // One server per session: a server exiting after the previous test's
        // session ended must not race this test's new-session.
        server = "netinspect-tests-\(unique)"
        let command = [binary.path] + (listens ? ["--listen", "unix:\(socketPath)"] : []) + arguments
        try run([
            "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)",
            "-e", "LANG=C.UTF-8", "-e", "TERM=tmux-256color",
            // Without Swift's backtracer a crash signal takes its default
            // action, so a crash sent with kill(2) ends the process as a real
            // fault would (the backtracer treats a sent signal as survivable).
            "-e", "SWIFT_BACKTRACE=enable=no",
        ] + environment.sorted { $0.key < $1.key }.flatMap { ["-e", "\($0.key)=\($0.value)"] }
          + (fromAShell ? ["/bin/bash", "--norc", "--noprofile", "-i", "+o", "history"] : command) + [
            ";", "set-option", "-t", name, "remain-on-exit", "on",
            // Accept OSC 52 from the program into tmux's paste buffer.
            ";", "set-option", "-g", "set-clipboard", "on",
        ])
        if fromAShell {
            type(command.map { "'\($0)'" }.joined(separator: " "))
            send("Enter")
        }
    }

    deinit { kill() }

    /// Waits until netinspect says it listens on ``socketPath``; generous,
    /// for a cold start on a loaded machine.
    @discardableResult
    public func waitUntilListening(timeout: TimeInterval = 20) throws -> String {
        try waitFor("listening on unix:\(socketPath)", timeout: timeout)
    }

    /// The pane's text now.
    public func capture() -> String {
        (try? run(["capture-pane", "-p", "-t", name])) ?? ""
    }

    /// tmux's newest paste buffer: what the program last put on the clipboard with OSC 52.
    public func clipboard() -> String {
        (try? run(["show-buffer"])) ?? ""
    }

    /// Sends keys by tmux name (`Enter`, `Tab`, `Space`, `Escape`, `q`…).
    public func send(_ keys: String...) {
        _ = try? run(["send-keys", "-t", name] + keys)
    }

    /// Types text literally.
    public func type(_ text: String) {
        _ = try? run(["send-keys", "-t", name, "-l", text])
    }

    /// The netinspect process (the pane runs it directly, without a shell).
    public var processID: pid_t {
        pid_t((try? run(["display-message", "-p", "-t", name, "#{pane_pid}"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    }

    /// Resizes the tmux window, which sends the program SIGWINCH.
    public func resize(width: Int, height: Int) {
        _ = try? run(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Polls the screen until it contains `text` (and passes `condition`);
    /// the timeout bounds a broken build, it is not a speed target.
    /// tmux can be read while netinspect is halfway through drawing a screen
    /// (a title with no rows under it yet, seen under load), so the screen
    /// returned is one that read the same twice in a row, or the last of a
    /// few reads if it keeps changing (a live list).
    @discardableResult
    public func waitFor(_ text: String, timeout: TimeInterval = 15, where condition: (String) -> Bool = { _ in true }) throws -> String {
        var screen = ""
        let found = poll(timeout: timeout, every: 0.05) { () -> String? in
            screen = capture()
            return screen.contains(text) && condition(screen) ? screen : nil
        }
        guard let found else { throw Failure(description: "'\(text)' did not appear within \(timeout)s. Screen:\n\(screen)") }
        return settled(found) { $0.contains(text) && condition($0) }
    }

    /// The screen once it reads the same twice 50 ms apart (at most four
    /// more reads), as long as it still `matches`; else the last that did.
    private func settled(_ screen: String, matching matches: (String) -> Bool) -> String {
        var last = screen
        var attempts = 0
        // Up to four more reads, each 50 ms after the one before: one that
        // no longer matches ends it with the last that did.
        let settled = poll(timeout: 0.3, every: 0.05) { () -> String? in
            attempts += 1
            guard attempts > 1 else { return nil }
            guard attempts <= 5 else { return last }
            let next = capture()
            guard matches(next) else { return last }
            if next == last { return next }
            last = next
            return nil
        }
        return settled ?? last
    }

    /// How the process ended.
    public enum Exit: Equatable, Sendable {
        case status(Int32)
        case signal(Int32)
        /// tmux saw the terminal close but never recorded a status; the
        /// process has exited all the same.
        case unknown

        /// Exited with status 0, or tmux could not tell.
        public var isClean: Bool { self == .status(0) || self == .unknown }
    }

    /// Waits for the process to end.
    public func waitForExit(timeout: TimeInterval = 10) throws -> Exit {
        let pid = processID
        let exit = poll(timeout: timeout, every: 0.05) { () -> Exit? in
            let fields = (try? run(["display-message", "-p", "-t", name, "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"])) ?? ""
            let parts = fields.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "1" else { return nil }
            if let status = Int32(parts[1]) { return .status(status) }
            if let signal = Int32(parts[2]) { return .signal(signal) }
            return pid > 0 && Self.hasExited(pid) ? .unknown : nil
        }
        if let exit { return exit }
        throw Failure(description: "netinspect did not exit within \(timeout)s. Screen:\n\(capture())")
    }

    /// Whether a process is gone or a zombie (tmux 3.3a sometimes leaves
    /// the pane's process unreaped when it sees the terminal close first).
    private static func hasExited(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return true }
        return status.contains("State:\tZ")
    }

    /// Kills the tmux server, which hangs up the pane's terminal (SIGHUP),
    /// and leaves the socket file to the program under test.
    public func closeTerminal() {
        _ = try? run(["kill-server"])
    }

    /// Ends the tmux server, and with it netinspect, and removes the socket file.
    public func kill() {
        closeTerminal()
        unlink(socketPath)
    }

    /// Runs tmux on this session's server.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let (status, text) = try ProgramRun.run([tmux, "-L", server, "-f", "/dev/null"] + arguments)
        guard status == 0 else { throw Failure(description: "tmux \(arguments.joined(separator: " ")) failed (\(status)): \(text)") }
        return text
    }

    /// What did not appear, or a tmux command that failed, with the screen.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }
}
