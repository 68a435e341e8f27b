import Foundation
import TestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import CaptureAgent

/// The real `netinspect --json --listen unix:PATH` (or `--dump`), as a
/// child process: counts the lines it prints, keeps what it says on stderr, and can be
/// stopped, continued and killed.
final class InspectorProcess: @unchecked Sendable {
    let path: String
    private let process = Process()
    private let stdout = Locked<[UInt8]>([])
    private let newlines = Locked(0)
    private let stderr = Locked("")
    private let stdoutEnded = Locked(false)

    /// The binary `swift build` made.
    static var binary: URL { NetinspectBinary.url }

    /// Starts it on a Unix socket and waits (at most 10 s) until it says it is listening.
    convenience init(listeningOn path: String) throws {
        try self.init(listen: "unix:\(path)")
    }

    /// Starts it on `endpoint` (`unix:PATH`, `tcp:HOST:PORT`) and waits (at
    /// most 10 s) until it says it is listening there. With `uid`, it runs
    /// as that user (through `setpriv`; needs root).
    init(listen endpoint: String, asUser uid: UInt32? = nil, output: String = "--json", arguments extra: [String] = []) throws {
        self.path = endpoint.hasPrefix("unix:") ? String(endpoint.dropFirst(5)) : endpoint
        let binary = Self.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("netinspect binary not found at \(binary.path); build it with `swift build --build-tests`")
        }
        if let uid {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary.path, output, "--listen", endpoint] + extra
        } else {
            process.executableURL = binary
            process.arguments = [output, "--listen", endpoint] + extra
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let stdout = self.stdout, newlines = self.newlines, stderr = self.stderr, stdoutEnded = self.stdoutEnded
        // A thread reading to the end rather than a readabilityHandler:
        // corelibs' handler sometimes never sees the end of a killed
        // child's output (1 of 40 kills here), and the soak needs it.
        let reading = out.fileHandleForReading
        Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = read(reading.fileDescriptor, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                let lines = buffer[..<count].reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
                stdout.withLock { $0.append(contentsOf: buffer[..<count]) }
                newlines.withLock { $0 += lines }
            }
            stdoutEnded.withLock { $0 = true }
        }.start()
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            stderr.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        guard eventually(timeout: 10, { stderr.current.contains("listening on \(endpoint)") }) else {
            kill(SIGKILL)
            throw XCTSkip("netinspect did not start listening: \(stderr.current)")
        }
    }

    var pid: pid_t { process.processIdentifier }

    /// Finished flows printed so far, one JSON line each.
    var lineCount: Int { newlines.current }

    var output: String { String(decoding: stdout.current, as: UTF8.self) }

    var errorOutput: String { stderr.current }

    func kill(_ signal: Int32) {
        _ = Glibc.kill(process.processIdentifier, signal)
    }

    /// Whether every thread of it is stopped (state T in /proc).
    var isStopped: Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        guard !tasks.isEmpty else { return false }
        return tasks.allSatisfy { task in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
            return state == "T" || state == "t"
        }
    }

    /// SIGSTOP, and waits until every thread is stopped.
    func stop() -> Bool {
        kill(SIGSTOP)
        return eventually(timeout: 5) { isStopped }
    }

    /// SIGKILL, and waits for it to be gone.
    func killAndWait() {
        guard process.isRunning else { return }
        kill(SIGKILL)
        process.waitUntilExit()
    }

    /// Every line it printed, once it has exited: waits (at most 10 s) for
    /// the end of its standard output, which the pipe may still hold.
    var finalLineCount: Int? {
        eventually { stdoutEnded.current } ? lineCount : nil
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length); return getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// One request made synchronously, as a plain app thread would.
func fetch(_ request: URLRequest, on session: URLSession) -> (outcome: AppOutcome, seconds: Double) {
    let done = DispatchSemaphore(value: 0)
    let result = Locked<AppOutcome?>(nil)
    let started = DispatchTime.now().uptimeNanoseconds
    session.dataTask(with: request) { data, response, error in
        result.withLock { $0 = AppOutcome(data: data, response: response, error: error) }
        done.signal()
    }.resume()
    done.wait()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    return (result.current!, seconds)
}

/// Requests in a loop on `workers` threads until ``finish()``, each checked
/// against the response it must get.
final class RequestLoop: @unchecked Sendable {
    let completed = Locked(0)
    let failures = Locked<[String]>([])
    private let stopping = Locked(false)
    private let group = DispatchGroup()

    /// - Parameter make: for (worker, index), the request and the body it must return.
    init(workers: Int, session: URLSession, _ make: @escaping @Sendable (Int, Int) -> (URLRequest, Data)) {
        for worker in 0 ..< workers {
            group.enter()
            let thread = Thread { [self] in
                var index = 0
                while !stopping.current {
                    let (request, expected) = make(worker, index)
                    let (outcome, _) = fetch(request, on: session)
                    if outcome.status != 200 || outcome.body != expected {
                        failures.withLock { $0.append("\(request.url!.absoluteString): \(outcome)") }
                    }
                    completed.withLock { $0 += 1 }
                    index += 1
                }
                group.leave()
            }
            thread.start()
        }
    }

    /// Waits (at most `timeout`) until `count` more requests have completed.
    @discardableResult
    func waitFor(more count: Int, timeout: TimeInterval = 20) -> Bool {
        let target = completed.current + count
        return eventually(timeout: timeout) { completed.current >= target }
    }

    /// Stops the loop and waits for the requests under way; returns how many completed.
    func finish() -> Int {
        stopping.withLock { $0 = true }
        group.wait()
        return completed.current
    }
}

/// This process's resident memory, from /proc/self/status.
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

/// glibc's `malloc_trim(0)`, so that resident memory measured next starts
/// from what is in use, not from what an earlier test freed.
func releaseFreedMemory() {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
}
