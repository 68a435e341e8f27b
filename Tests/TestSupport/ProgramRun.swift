#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a program to its end for a test (tmux, curl, swiftc, a demo):
/// standard input from /dev/null, standard output and error into files,
/// not pipes, because a tmux server that `new-session` starts inherits them
/// and would hold a pipe open, and a child that fills a pipe nobody reads
/// yet blocks for ever.
///
/// ```swift
/// let (status, output) = try ProgramRun.run(["/usr/bin/tmux", "-V"])
/// let demo = try ProgramRun.collect([path], adding: ["NETINSPECT": "unix:/tmp/x.sock"], timeout: 30)
/// XCTAssertEqual(demo.status, 0, demo.errorOutput)
/// ```
public enum ProgramRun {
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// How a program ended and what it wrote.
    public struct Finished: Sendable {
        /// Its process ID while it ran.
        public var processID: pid_t
        /// Its exit status; -1 when a signal ended it (or the timeout did).
        public var status: Int32
        /// Whether it outlived the timeout and was killed.
        public var timedOut: Bool
        /// What it wrote on standard output.
        public var output: String
        /// What it wrote on standard error.
        public var errorOutput: String
    }

    /// Runs `argv` (`argv[0]` a path) and waits for it: its exit status
    /// (-1 when a signal ended it) and everything it wrote, both streams
    /// in one.
    public static func run(_ argv: [String]) throws -> (status: Int32, output: String) {
        let finished = try spawn(argv, environment: nil, errorsApart: false, timeout: nil)
        return (finished.status, finished.output)
    }

    /// Runs `argv` (`argv[0]` a path) with `environment` added to this
    /// process's, and waits for it, at most `timeout` seconds if given (then
    /// it is killed): its status and its two streams apart.
    public static func collect(_ argv: [String], adding environment: [String: String] = [:], timeout: TimeInterval? = nil) throws -> Finished {
        let merged = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return try spawn(argv, environment: merged, errorsApart: true, timeout: timeout)
    }

    private static func spawn(_ argv: [String], environment: [String: String]?, errorsApart: Bool, timeout: TimeInterval?) throws -> Finished {
        let outputPath = NSTemporaryDirectory() + "netinspect-run-\(UUID().uuidString)"
        let errorPath = outputPath + ".err"
        defer { unlink(outputPath); unlink(errorPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if errorsApart {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // The calling thread (a Swift concurrency or Dispatch worker) blocks
        // most signals, and a spawned program keeps that mask: a tmux server
        // started so never sees SIGCHLD or SIGTERM, outlives kill-server,
        // and leaks with the netinspect in its pane.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let cEnvironment = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { cEnvironment?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned: Int32
        if var variables = cEnvironment {
            spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, &variables)
        } else {
            spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        }
        guard spawned == 0 else { throw SpawnError(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        let (status, timedOut) = wait(for: pid, timeout: timeout)
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let exited = (status & 0x7F) == 0
        return Finished(processID: pid, status: exited ? (status >> 8) & 0xFF : -1, timedOut: timedOut,
                        output: read(outputPath), errorOutput: errorsApart ? read(errorPath) : "")
    }

    /// Reaps `pid`; past `timeout`, kills it first. The timeout bounds a
    /// hung child, it is not a speed target.
    private static func wait(for pid: pid_t, timeout: TimeInterval?) -> (status: Int32, timedOut: Bool) {
        var status: Int32 = 0
        guard let timeout else {
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            return (status, false)
        }
        let reaped = poll(timeout: timeout, every: 0.02) { () -> Bool? in
            let reaped = waitpid(pid, &status, WNOHANG)
            return reaped == pid || (reaped == -1 && errno != EINTR) ? true : nil
        }
        if reaped == true { return (status, false) }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        return (status, true)
    }
}
