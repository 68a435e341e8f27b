import Foundation
import TestSupport
import XCTest
@testable import CaptureAgent

/// One of `Examples/`' programs, run in a fresh process with its agent
/// sending to `inspector`; and the README snippets cut from its source.
struct ExampleProgram {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let name: String

    /// The program built beside the test bundle; fails the test when it is
    /// not there (`swift build --build-tests` builds it with the tests).
    func executable() throws -> URL {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw Prerequisite("\(name) is not built next to the test bundle; run `swift build --build-tests` first")
        }
        return executable
    }

    /// Runs it to its end (killed after `timeout`, a bound for a hung
    /// program) with its agent sending to `inspector`.
    func run(arguments: [String], inspector: TestInspector, timeout: TimeInterval = 30) throws -> ProgramRun.Finished {
        try ProgramRun.collect([try executable().path] + arguments, adding: ["NETINSPECT": "unix:\(inspector.path)"], timeout: timeout)
    }

    /// A program left running (a service), its output collected as it comes.
    final class Running: @unchecked Sendable {
        let process = Process()
        private let text = Locked("")

        var pid: Int { Int(process.processIdentifier) }
        var output: String { text.current }

        init(executable: URL, arguments: [String], environment: [String: String]) throws {
            process.executableURL = executable
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            let text = text
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil; return }
                text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            try process.run()
        }

        deinit { stop() }

        /// The port a service says it listens on (`listening on 127.0.0.1:PORT`).
        func listeningPort(timeout: TimeInterval = 30) throws -> Int {
            var port: Int?
            _ = eventually(timeout: timeout) {
                port = output.range(of: #"listening on 127\.0\.0\.1:\d+"#, options: .regularExpression)
                    .flatMap { Int(output[$0].split(separator: ":").last ?? "") }
                return port != nil || !process.isRunning
            }
            return try XCTUnwrap(port, "no listening line: \(output)")
        }

        /// Ends it (SIGTERM) and waits.
        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Starts the program built beside the test bundle with its agent
    /// sending to the inspector at `endpoint` (`unix:PATH`), and leaves it
    /// running; skips the test when it is not built.
    func launch(arguments: [String], inspector endpoint: String) throws -> Running {
        try Running(executable: try executable(), arguments: arguments, environment: ["NETINSPECT": endpoint])
    }

    /// The lines between `// snippet:NAME:begin` and `// snippet:NAME:end` in
    /// its main.swift, less the indentation of the begin marker.
    func snippet(_ marker: String) throws -> String {
        let source = try String(contentsOf: Self.root.appendingPathComponent("Examples/\(name)/main.swift"), encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("// snippet:\(marker):begin") })
        let end = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("// snippet:\(marker):end") })
        let indent = lines[begin].prefix { $0 == " " }.count
        return lines[(begin + 1) ..< end].map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
            .joined(separator: "\n") + "\n"
    }

    /// docs/AGENT.md, where each adapter's section shows the examples' snippets.
    static var agentGuide: String {
        get throws { try String(contentsOf: root.appendingPathComponent("docs/AGENT.md"), encoding: .utf8) }
    }
}
