import Foundation
#if canImport(Glibc)
import Glibc
#endif
import WireProtocol

/// The real `netinspect --json` in a process of its own, as a person runs it
/// beside an app: section 1's realistic mode. A thread reads its output,
/// counting the flows it prints and noting, per flow, the first body `size`
/// in its line (the request's when it has a body), so upload rows can check
/// that every flow arrived with its true request size.
final class NetinspectProcess: @unchecked Sendable {
    let endpoint: Endpoint
    private let pid: pid_t
    private let state = NSLock()
    private var lines = 0
    private var firstSizes: [Int: Int] = [:]
    private var listening = false
    private var isReaped = false

    /// The `netinspect` binary beside this one (`swift build` puts them
    /// together), or `NETINSPECT_BENCH_NETINSPECT`; nil when neither exists.
    static var binary: URL? {
        if let path = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_NETINSPECT"] { return URL(fileURLWithPath: path) }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("netinspect")
        return FileManager.default.isExecutableFile(atPath: beside.path) ? beside : nil
    }

    init(binary: URL) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-\(getpid())-process.sock").path
        endpoint = .unix(path: path)
        let (pid, output, news) = try Self.spawn(binary.path, ["--json", "--listen", "unix:\(path)"])
        self.pid = pid
        Thread { [self] in readFlows(from: output) }.start()
        Thread { [self] in readNews(from: news) }.start()
        let deadline = Date().addingTimeInterval(10)
        while !state.withLock({ listening }), Date() < deadline { usleep(10_000) }
        guard state.withLock({ listening }) else {
            shutdown()
            throw BenchmarkError(description: "netinspect did not start listening on \(endpoint)")
        }
    }

    /// Flows printed so far.
    var flowsPrinted: Int { state.withLock { lines } }

    /// Of the flows from `start` on, how many had `size` as their first body size.
    func flows(from start: Int, withFirstSize size: Int) -> Int {
        state.withLock { firstSizes.filter { $0.key >= start && $0.value == size }.count }
    }

    /// Waits until `target` flows were printed or `timeout` passes; returns the count.
    func waitForFlows(_ target: Int, timeout: Double) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while flowsPrinted < target, Date() < deadline { usleep(5_000) }
        return flowsPrinted
    }

    /// Ends it; the output reader must stay free to drain meanwhile.
    func shutdown() {
        let first = state.withLock { () -> Bool in
            defer { isReaped = true }
            return !isReaped
        }
        guard first else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    /// posix_spawn with its standard output and error on pipes. Not
    /// Foundation's `Process`: under valgrind (the callgrind recipe) its
    /// child setup fails with EBADF on the descriptors valgrind reserves.
    private static func spawn(_ path: String, _ arguments: [String]) throws -> (pid_t, FileHandle, FileHandle) {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        guard pipe(&out) == 0, pipe(&err) == 0 else { throw BenchmarkError(description: "pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        for end in out + err { posix_spawn_file_actions_addclose(&actions, end) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(out[1])
        close(err[1])
        guard result == 0 else {
            close(out[0])
            close(err[0])
            throw BenchmarkError(description: "spawning \(path): \(String(cString: strerror(result)))")
        }
        return (pid, FileHandle(fileDescriptor: out[0], closeOnDealloc: true), FileHandle(fileDescriptor: err[0], closeOnDealloc: true))
    }

    private func readFlows(from handle: FileHandle) {
        let marker = Array(#""size":"#.utf8)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        // Where the current line's search for the marker stands, and what it found.
        var matched = 0, digits: Int?, found: Int?
        while true {
            let count = read(handle.fileDescriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            for byte in buffer[..<count] {
                if byte == 10 {
                    state.withLock {
                        if let size = found ?? digits { firstSizes[lines] = size }
                        lines += 1
                    }
                    matched = 0
                    digits = nil
                    found = nil
                    continue
                }
                guard found == nil else { continue }
                if matched == marker.count {
                    if byte >= 48, byte <= 57 {
                        digits = (digits ?? 0) * 10 + Int(byte - 48)
                        continue
                    }
                    found = digits
                    matched = 0
                }
                matched = byte == marker[matched] ? matched + 1 : (byte == marker[0] ? 1 : 0)
            }
        }
    }

    /// Notes when it is listening, then only drains what it says.
    private func readNews(from handle: FileHandle) {
        var text = ""
        while true {
            let data = handle.availableData
            guard !data.isEmpty else { return }
            guard !state.withLock({ listening }) else { continue }
            text += String(decoding: data, as: UTF8.self)
            if text.contains("listening on") { state.withLock { listening = true } }
        }
    }
}
