#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a program to its end for a test (tmux, mostly): standard input
/// from /dev/null, standard output and error into a file, not a pipe,
/// because a tmux server that `new-session` starts inherits them and would
/// hold a pipe open.
///
/// ```swift
/// let (status, output) = try ProgramRun.run(["/usr/bin/tmux", "-V"])
/// ```
public enum ProgramRun {
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `argv` (`argv[0]` a path) and waits for it: its exit status
    /// (-1 when a signal ended it) and everything it wrote.
    public static func run(_ argv: [String]) throws -> (status: Int32, output: String) {
        let outputPath = NSTemporaryDirectory() + "netinspect-run-\(UUID().uuidString)"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
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
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else { throw SpawnError(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7F) == 0
        return (exited ? (status >> 8) & 0xFF : -1, output)
    }
}
