import Foundation
import TestSupport
import NIOConcurrencyHelpers

/// The real `netinspect --json` as a child process: its stdout collected as
/// JSON lines, the OTLP port read from its stderr.
final class InspectorProcess: @unchecked Sendable {
    private let process = Process()
    private let lines = NIOLockedValueBox<(out: [String], err: String, pending: Data)>(([], "", Data()))

    /// Starts it with `arguments` after `--json`.
    init(_ arguments: [String]) throws {
        process.executableURL = Self.binary
        process.arguments = ["--json"] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let lines = lines
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            lines.withLockedValue { lines in
                lines.pending += data
                while let newline = lines.pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.out.append(String(decoding: lines.pending[lines.pending.startIndex..<newline], as: UTF8.self))
                    lines.pending = Data(lines.pending[(newline + 1)...])
                }
            }
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            lines.withLockedValue { $0.err += text }
        }
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// What it printed on stderr so far.
    var errorOutput: String { lines.withLockedValue { $0.err } }

    /// Each stdout line parsed as a flow, in order.
    var flows: [[String: Any]] {
        lines.withLockedValue { $0.out }.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// The port of the first `tcp:` address it says it listens on.
    func listeningPort() throws -> Int {
        let text = try waitFor("a listening line") { errorOutput.range(of: #"listening on tcp:127\.0\.0\.1:(\d+)"#, options: .regularExpression) }
        return Int(errorOutput[text].split(separator: ":").last ?? "") ?? -1
    }

    /// Polls until `condition` gives a value; gives up (and fails) only
    /// after a minute, a bound for a broken build, not a speed target.
    func waitFor<T>(_ what: String, _ condition: () -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let value = condition() { return value }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw WaitError(description: "gave up waiting for \(what); stderr: \(errorOutput)")
    }

    struct WaitError: Error, CustomStringConvertible {
        var description: String
    }

    /// The binary `swift build` made.
    static var binary: URL { NetinspectBinary.url }
}
