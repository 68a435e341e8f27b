import Foundation
import XCTest

/// One of `Examples/`' programs, run in a fresh process with its agent
/// sending to `inspector`; and the README snippets cut from its source.
struct ExampleProgram {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let name: String

    struct Run {
        var finished: Bool
        var status: Int32
        var output: String
    }

    /// Runs the program built beside the test bundle; skips the test when
    /// it is not there.
    func run(arguments: [String], inspector: TestInspector, timeout: TimeInterval = 30) throws -> Run {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw XCTSkip("\(name) is not built next to the test bundle; run `swift build --build-tests` first")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["NETINSPECT": "unix:\(inspector.path)"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let finished = eventually(timeout: timeout) { !process.isRunning }
        if !finished { process.terminate() }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Run(finished: finished, status: process.terminationStatus, output: text)
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

    static var readme: String {
        get throws { try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8) }
    }
}
