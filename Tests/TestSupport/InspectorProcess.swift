#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The real `netinspect --json --listen ENDPOINT` (or `--dump`) as a child
/// process, for tests where this process is the app: what it prints is
/// collected as it comes (a line a finished flow), what it says on stderr
/// kept, and it can be stopped, continued and killed.
///
/// ```swift
/// let inspector = try InspectorProcess(listen: "unix:/tmp/ni-test.sock")
/// defer { inspector.killAndWait() }
/// XCTAssertTrue(eventually { inspector.lineCount >= 1 })
/// ```
public final class InspectorProcess: @unchecked Sendable {
    /// The endpoint it listens on, without a `unix:` prefix.
    public let path: String
    private let process = Process()
    private let collected = Collected()

    /// What it printed, shared with the threads that read it (not the
    /// process object, so that dropping it kills the child).
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var stdout: [UInt8] = []
        private var newlines = 0
        private var stderr = ""
        private var stdoutEnded = false

        func locked<T>(_ body: (Collected) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(self)
        }

        func append(output bytes: ArraySlice<UInt8>) {
            let lines = bytes.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            locked { $0.stdout.append(contentsOf: bytes); $0.newlines += lines }
        }

        func append(errors text: String) { locked { $0.stderr += text } }
        func endOutput() { locked { $0.stdoutEnded = true } }
        var lineCount: Int { locked { $0.newlines } }
        var output: String { locked { String(decoding: $0.stdout, as: UTF8.self) } }
        var errorOutput: String { locked { $0.stderr } }
        var outputEnded: Bool { locked { $0.stdoutEnded } }
    }

    /// Starts it on a Unix socket and waits until it says it is listening.
    public convenience init(listeningOn path: String) throws {
        try self.init(listen: "unix:\(path)")
    }

    /// Starts it on `endpoint` (`unix:PATH`, `tcp:HOST:PORT`, `otlp:HOST:PORT`)
    /// with `output` (`--json`, `--dump`) and `arguments`, and waits (at most
    /// 10 s) until it says it is listening; throws, with what it printed and
    /// how it ended, if it never does: a netinspect that cannot listen is the
    /// failure the tests that use it are there to find.
    /// With `uid`, it runs as that user (through `setpriv`; needs root).
    public init(listen endpoint: String, asUser uid: UInt32? = nil, output: String = "--json", arguments extra: [String] = []) throws {
        path = endpoint.hasPrefix("unix:") ? String(endpoint.dropFirst(5)) : endpoint
        let binary = try Prerequisite.netinspect()
        if let uid {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary.path, output, "--listen", endpoint] + extra
        } else {
            process.executableURL = binary
            process.arguments = [output, "--listen", endpoint] + extra
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // A thread reading to the end rather than a readabilityHandler:
        // corelibs' handler sometimes never sees the end of a killed
        // child's output, and the soak tests need it.
        let reading = out.fileHandleForReading, collected = collected
        Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = read(reading.fileDescriptor, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                collected.append(output: buffer[..<count])
            }
            collected.endOutput()
        }.start()
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            collected.append(errors: String(decoding: data, as: UTF8.self))
        }
        try process.run()
        guard eventually(timeout: 10, { errorOutput.contains("listening on ") || !process.isRunning }),
              errorOutput.contains("listening on ") else {
            let ended = process.isRunning ? "still running after 10 s" : "exited with status \(process.terminationStatus)"
            killAndWait()
            // Its standard error may still be in the pipe when it has just exited.
            eventually(timeout: 1) { !errorOutput.isEmpty }
            throw NotListening(description: "netinspect \(process.arguments ?? []) did not start listening (\(ended)); it said: \(errorOutput)")
        }
    }

    deinit { killAndWait() }

    public var pid: pid_t { process.processIdentifier }

    /// Lines printed so far (with `--json`, finished flows).
    public var lineCount: Int { collected.lineCount }

    /// Everything printed on standard output so far.
    public var output: String { collected.output }

    /// Everything said on standard error so far.
    public var errorOutput: String { collected.errorOutput }

    /// Each line printed so far that is a JSON object (with `--json`, a flow), in order.
    public var jsonLines: [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// The port of the first `tcp:` address it says it listens on (an
    /// `otlp:` endpoint's is one too).
    public func listeningPort() throws -> Int {
        let range = try waitFor("a listening line") { errorOutput.range(of: #"listening on tcp:127\.0\.0\.1:(\d+)"#, options: .regularExpression) }
        return Int(errorOutput[range].split(separator: ":").last ?? "") ?? -1
    }

    /// Polls until `condition` gives a value, while it runs; gives up (and
    /// throws) after a minute, a bound for a broken build, not a speed target.
    public func waitFor<T>(_ what: String, _ condition: () -> T?) throws -> T {
        // The outer optional ends the polling: a value, or nil once the process has exited.
        let outcome = poll(timeout: 60, every: 0.02) { () -> T?? in
            if let value = condition() { return .some(value) }
            return process.isRunning ? nil : .some(nil)
        }
        if let value = outcome ?? nil { return value }
        throw WaitError(description: "gave up waiting for \(what); stderr: \(errorOutput)")
    }

    public struct WaitError: Error, CustomStringConvertible {
        public var description: String
    }

    /// netinspect never said it listens: what it printed on standard error and how it ended.
    public struct NotListening: Error, CustomStringConvertible {
        public var description: String
    }

    public func kill(_ signal: Int32) {
        _ = Glibc.kill(process.processIdentifier, signal)
    }

    /// Whether every thread of it is stopped (state T in /proc).
    public var isStopped: Bool {
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
    public func stop() -> Bool {
        kill(SIGSTOP)
        return eventually(timeout: 5) { isStopped }
    }

    /// SIGKILL, and waits for it to be gone.
    public func killAndWait() {
        guard process.isRunning else { return }
        kill(SIGKILL)
        process.waitUntilExit()
    }

    /// Every line it printed, once it has exited: waits (at most 10 s) for
    /// the end of its standard output, which the pipe may still hold.
    public var finalLineCount: Int? {
        eventually { collected.outputEnded } ? lineCount : nil
    }
}
