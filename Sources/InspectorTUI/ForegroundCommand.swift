#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Runs a program that needs the terminal (the person's editor) the way a
/// shell or git does: in netinspect's own process group, which is the
/// terminal's foreground group, so it may read the keyboard.
///
/// Foundation's `Process` cannot do this on Linux: it always spawns with
/// `POSIX_SPAWN_SETPGROUP`, so its child is a background group that stops
/// (SIGTTIN) the moment it reads the terminal.
///
/// ```swift
/// let outcome = ForegroundCommand.run(["/bin/sh", "-c", "vi \"$1\"", "editor", path])
/// ```
enum ForegroundCommand {
    /// How the program ended.
    enum Outcome: Equatable {
        case exited(Int32)
        case killed(signal: Int32)
        /// posix_spawn failed; the reason.
        case cannotStart(String)

        /// The outcome a waitpid(2) status describes.
        init(waitStatus status: Int32) {
            // WIFEXITED and friends are macros Swift does not import.
            let signalNumber = status & 0x7F
            self = signalNumber == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signalNumber)
        }

        /// The status a shell would give: the exit status, 128 + N for a
        /// death by signal N, 127 for a program that could not start.
        var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .killed(let number): 128 + number
            case .cannotStart: 127
            }
        }

        /// How it ended, in words: "exited with status 0", "killed by signal 15 (Terminated)".
        var summary: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let number): "killed by signal \(number) (\(String(cString: strsignal(number))))"
            case .cannotStart(let reason): "could not start: \(reason)"
            }
        }
    }

    /// Runs `argv` (`argv[0]` a path) on netinspect's terminal and waits
    /// for it to end.
    static func run(_ argv: [String]) -> Outcome {
        // A parent without job control (no shell's `fg`) starts us with
        // SIGTSTP ignored; then nothing may stop, neither us nor the editor.
        let hasJobControl = !isIgnored(SIGTSTP)
        // SIGINT and SIGQUIT are ignored below while it runs, and SIGPIPE by SwiftNIO.
        let defaults = [SIGINT, SIGQUIT, SIGPIPE] + (hasJobControl ? [SIGTSTP, SIGTTIN, SIGTTOU] : [])

        // Ctrl-C and Ctrl-\ in the editor reach the whole foreground group:
        // they are the editor's, not a reason for netinspect to quit (git
        // does the same). Ctrl-Z must stop netinspect with the editor, so
        // the shell gets the terminal back and `fg` resumes both; ncurses'
        // own SIGTSTP handler would redraw netinspect over the editor.
        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        let previousStop = hasJobControl ? signal(SIGTSTP, SIG_DFL) : nil
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
            if hasJobControl { signal(SIGTSTP, previousStop) }
        }

        // netinspect's sockets and pipes are not the editor's: a program it
        // leaves running (an editor's server) would hold the listening socket
        // after netinspect quits.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        closeInheritedDescriptors(in: &actions)

        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = SpawnAttributes.with(resettingToDefault: defaults) { attributes in
            posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        }
        guard spawned == 0 else { return .cannotStart(String(cString: strerror(spawned))) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return .cannotStart("waitpid: \(String(cString: strerror(errno)))") }
        }
        return Outcome(waitStatus: status)
    }

    /// Adds to `actions` the closing of every descriptor above standard
    /// error this process has open: netinspect's sockets and pipes are not
    /// a child's business. (glibc's closefrom action is not imported.)
    static func closeInheritedDescriptors(in actions: inout posix_spawn_file_actions_t) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let descriptor = Int32(name), descriptor > STDERR_FILENO { posix_spawn_file_actions_addclose(&actions, descriptor) }
        }
    }

    private static func isIgnored(_ number: Int32) -> Bool {
        var current = sigaction()
        sigaction(number, nil, &current)
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}
