#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The command `netinspect -- COMMAND [ARGS…]` runs, its agent pointed at
/// this netinspect through its environment.
///
/// It runs in netinspect's own process group, as a shell's foreground job
/// would: Ctrl-C at the terminal reaches it directly, and it may read the
/// keyboard when netinspect has no UI. A thread waits for it and makes
/// ``exitDescriptor`` readable when it ends, so the main loop `poll()`s
/// for its end next to the listener and the signals.
///
/// ```swift
/// let command = try WrappedCommand.start(["swift", "test"], adding: ["NETINSPECT": "unix:/tmp/x.sock"], capturesOutput: false)
/// // poll(command.exitDescriptor) … then:
/// let status = command.outcome?.shellStatus
/// ```
final class WrappedCommand: @unchecked Sendable {
    /// Its process ID.
    let processID: pid_t
    /// Readable once it has ended.
    let exitDescriptor: Int32
    /// Its standard output and error, when they go through netinspect
    /// (``start(_:adding:capturesOutput:)`` with `capturesOutput`); else -1.
    let outputDescriptor: Int32
    private let lock = NSLock()
    private var ended: ForegroundCommand.Outcome?

    private let arguments: [String]

    private init(arguments: [String], processID: pid_t, exitDescriptor: Int32, outputDescriptor: Int32) {
        self.arguments = arguments
        self.processID = processID
        self.exitDescriptor = exitDescriptor
        self.outputDescriptor = outputDescriptor
    }

    /// How it ended; nil while it runs.
    var outcome: ForegroundCommand.Outcome? {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Starts `arguments` (the first one found in `$PATH` as a shell would)
    /// with `environment` added to netinspect's. With `capturesOutput`, its
    /// standard input is /dev/null and its output and errors go to one pipe
    /// (``outputDescriptor``), so that it cannot write over the UI; without,
    /// it shares netinspect's three.
    static func start(_ arguments: [String], adding environment: [String: String], capturesOutput: Bool) throws -> WrappedCommand {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var output: [Int32] = [-1, -1]
        if capturesOutput {
            guard pipe(&output) == 0 else { throw SpawnError("pipe: \(String(cString: strerror(errno)))") }
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO)
            posix_spawn_file_actions_adddup2(&actions, output[1], STDERR_FILENO)
        }
        ForegroundCommand.closeInheritedDescriptors(in: &actions)

        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        var cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        // The signals netinspect handles or SwiftNIO ignores are the
        // command's to take as it would from a shell.
        let spawned = SpawnAttributes.with(resettingToDefault: SignalPipe.signals + [SIGPIPE, SIGQUIT]) { attributes in
            posix_spawnp(&pid, arguments[0], &actions, &attributes, &cArguments, &cEnvironment)
        }
        if capturesOutput { close(output[1]) }
        guard spawned == 0 else {
            if capturesOutput { close(output[0]) }
            throw SpawnError("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        if capturesOutput { _ = fcntl(output[0], F_SETFL, fcntl(output[0], F_GETFL) | O_NONBLOCK) }

        var exitPipe: [Int32] = [-1, -1]
        guard pipe(&exitPipe) == 0 else { throw SpawnError("pipe: \(String(cString: strerror(errno)))") }
        let command = WrappedCommand(arguments: arguments, processID: pid, exitDescriptor: exitPipe[0], outputDescriptor: capturesOutput ? output[0] : -1)
        let writeEnd = exitPipe[1], child = pid
        // waitpid(2) blocks: a thread of its own, so the main loop only polls.
        Thread {
            var status: Int32 = 0
            var outcome = ForegroundCommand.Outcome.cannotStart("not reaped")
            while true {
                if waitpid(child, &status, 0) == child { outcome = .init(waitStatus: status); break }
                guard errno == EINTR else { outcome = .cannotStart("waitpid: \(String(cString: strerror(errno)))"); break }
            }
            command.lock.lock()
            command.ended = outcome
            command.lock.unlock()
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            close(writeEnd)
        }.start()
        return command
    }

    /// The command and its arguments, as a person would type them.
    var commandLine: String { arguments.map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ") }

    /// Sends SIGTERM if it still runs and was sent no signal yet.
    func terminate() {
        if outcome == nil, !signalled { kill(processID, SIGTERM) }
    }

    /// Passes a signal netinspect received on to the command, unless the
    /// terminal sent it, which reached the command already.
    func forward(_ received: SignalPipe.Received) {
        guard outcome == nil else { return }
        signalled = true
        guard !received.fromTerminal else { return }
        kill(processID, received.number)
    }

    /// Whether a signal reached it through netinspect or the terminal (only the main thread reads or writes it).
    private var signalled = false

    /// Reads what the command wrote since the last call (``outputDescriptor``);
    /// empty when nothing is waiting, nil at its end.
    func readOutput() -> [UInt8]? {
        guard outputDescriptor >= 0 else { return nil }
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(outputDescriptor, &buffer, buffer.count)
            if count > 0 { collected += buffer[..<count]; continue }
            if count == 0 { return collected.isEmpty ? nil : collected }
            return collected   // EAGAIN: nothing more for now.
        }
    }

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
