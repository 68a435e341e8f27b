import Foundation
#if canImport(Glibc)
import Glibc
#endif
import WireProtocol

/// The real `netinspect --dump` (or `--json`) in a process of its own, as a
/// person runs it beside an app: section 1's realistic mode. A thread reads
/// its output, counting the flows it prints and, from `--json` lines, noting
/// per flow the first body `size` (the request's when it has a body), so
/// upload rows can check that every flow arrived with its true request size.
final class NetinspectProcess: @unchecked Sendable {
    /// What it prints a flow as: `--dump`'s line, as the issue's figures
    /// were measured, or `--json`, whose lines carry body sizes.
    enum Output: String { case dump = "--dump", json = "--json" }

    let endpoint: Endpoint
    let pid: pid_t
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

    /// `cpus`: the CPUs it may run on (``CPUPinning``); nil, wherever this process may.
    init(binary: URL, output printed: Output = .dump, cpus: [Int]? = nil) throws {
        let name = "\(printed)\(cpus.map { "-cpu" + $0.map(String.init).joined(separator: ",") } ?? "")"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-\(getpid())-\(name)-process.sock").path
        endpoint = .unix(path: path)
        let arguments = [printed.rawValue, "--listen", "unix:\(path)"]
        // Only the spawning thread is pinned, so this process's readers below are not.
        let (pid, output, news) = try cpus.map { cpus in try CPUPinning.withCallingThread(on: cpus) { try Self.spawn(binary.path, arguments) } }
            ?? Self.spawn(binary.path, arguments)
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

    /// Counts lines and notes each one's first `"size":` value. This runs
    /// in the measured process, so it searches with `memchr` and `memcmp`
    /// rather than looking at every byte in Swift: a byte loop here cost
    /// about 48 k instructions a flow, charged to capture.
    private func readFlows(from handle: FileHandle) {
        let marker = Array(#""size":"#.utf8)
        let capacity = 1 << 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        // Bytes of the current line kept from the last read: enough to hold
        // a marker and its number cut by the read's end.
        var kept = 0
        var found: Int?
        while true {
            let count = read(handle.fileDescriptor, buffer + kept, capacity - kept)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            let end = kept + count
            var lineStart = 0
            while lineStart < end {
                let rest = end - lineStart
                let newline = memchr(buffer + lineStart, 10, rest).map { UnsafeMutableRawPointer($0) - UnsafeMutableRawPointer(buffer) }
                let lineEnd = newline ?? end
                if found == nil { found = Self.size(in: buffer + lineStart, count: lineEnd - lineStart, after: marker, complete: newline != nil) }
                guard newline != nil else { break }
                let size = found
                state.withLock {
                    if let size { firstSizes[lines] = size }
                    lines += 1
                }
                found = nil
                lineStart = lineEnd + 1
            }
            // Keep the tail of an unfinished line for a marker cut in two.
            let tail = end - lineStart
            kept = min(tail, found == nil ? 64 : 0)
            if kept > 0 { memmove(buffer, buffer + end - kept, kept) }
        }
    }

    /// The number after the first `marker` in these bytes; nil when there is
    /// none, or (unless the line is `complete`) when it may be cut off.
    private static func size(in bytes: UnsafeMutablePointer<UInt8>, count: Int, after marker: [UInt8], complete: Bool) -> Int? {
        // Glibc's module has no `memmem` (a GNU extension): quotes by
        // `memchr`, then the rest compared.
        var start = 0, hit: Int?
        while hit == nil, count - start >= marker.count, let quote = memchr(bytes + start, Int32(marker[0]), count - start - marker.count + 1) {
            let at = UnsafeMutableRawPointer(quote) - UnsafeMutableRawPointer(bytes)
            if memcmp(bytes + at, marker, marker.count) == 0 { hit = at } else { start = at + 1 }
        }
        guard let hit else { return nil }
        var index = hit + marker.count
        var value = 0, digits = 0
        while index < count, bytes[index] >= 48, bytes[index] <= 57 {
            value = value * 10 + Int(bytes[index] - 48)
            digits += 1
            index += 1
        }
        guard digits > 0, index < count || complete else { return nil }
        return value
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
