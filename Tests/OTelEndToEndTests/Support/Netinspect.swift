// Built with the SwiftOTel trait (on by default; Package.swift).
#if SwiftOTel
import Foundation
import NIOConcurrencyHelpers
import TestSupport
import WireProtocol

/// The real `netinspect --json`, built by the root package, as a child
/// process: its stdout read as flows, its stderr kept for the listening and
/// connected lines.
final class Netinspect: Sendable {
    private let process: Process
    private let output = NIOLockedValueBox<(stdout: Data, stderr: String)>((Data(), ""))

    /// Starts it with `arguments` after `--json`.
    /// - Throws: ``Missing`` when the binary is not built, or what `Process.run()` throws.
    init(_ arguments: [String]) throws {
        let binary = NetinspectBinary.url
        guard FileManager.default.isExecutableFile(atPath: binary.path) else { throw Missing(path: binary.path) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--json"] + arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let output = output
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.withLockedValue { $0.stdout += data }
        }
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            output.withLockedValue { $0.stderr += text }
        }
        try process.run()
        self.process = process
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String {
            "no netinspect binary at \(path): run `swift build --build-tests` first"
        }
    }

    /// Everything it printed on stdout so far, as text.
    var standardOutput: String { output.withLockedValue { String(decoding: $0.stdout, as: UTF8.self) } }
    /// Everything it printed on stderr so far.
    var errorOutput: String { output.withLockedValue { $0.stderr } }

    /// Each complete stdout line read as a flow, in order.
    func flows() throws -> [NetworkLog] {
        let text = standardOutput
        guard let lastNewline = text.lastIndex(of: "\n") else { return [] }
        return try text[..<lastNewline].split(separator: "\n").map { try NetworkLog(jsonLine: Array($0.utf8)) }
    }

    /// The port of the `tcp:` address it says it listens on (the OTLP one).
    func otlpPort() async throws -> Int {
        try await waitFor("the OTLP listening line") {
            let text = errorOutput
            return text.firstMatch(of: /listening on tcp:127\.0\.0\.1:(\d+)/).flatMap { Int($0.1) }
        }
    }

    /// Polls until `condition` gives a value; gives up (and fails) after a
    /// minute, a bound for a broken build, not a speed target.
    func waitFor<T>(_ what: String, _ condition: () throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let value = try condition() { return value }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw WaitError(description: "gave up waiting for \(what); netinspect's stderr:\n\(errorOutput)")
    }

    struct WaitError: Error, CustomStringConvertible {
        var description: String
    }
}
#endif
