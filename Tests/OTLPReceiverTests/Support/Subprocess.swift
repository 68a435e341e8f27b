import Foundation

/// Runs a program to completion and returns what it printed.
struct Subprocess {
    var status: Int32
    var output: Data
    var errorOutput: String

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Subprocess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read before waiting: a full pipe would block the child for ever.
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Subprocess(status: process.terminationStatus, output: outputData, errorOutput: String(decoding: errorData, as: UTF8.self))
    }

    /// The reply curl got to a POST of `body`.
    struct Reply {
        var status: Int
        var body: Data
    }

    /// POSTs a file's bytes with curl (a real HTTP client) and returns the reply.
    static func post(_ url: String, file: String, headers: [String] = [], extra: [String] = []) throws -> Reply {
        let replyFile = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-reply-\(UUID()).bin").path
        defer { try? FileManager.default.removeItem(atPath: replyFile) }
        let result = try run("/usr/bin/curl", ["-s", "-o", replyFile, "-w", "%{http_code}", "--data-binary", "@\(file)"]
            + headers.flatMap { ["-H", $0] } + extra + [url])
        let body = (try? Data(contentsOf: URL(fileURLWithPath: replyFile))) ?? Data()
        return Reply(status: Int(String(decoding: result.output, as: UTF8.self)) ?? -1, body: body)
    }

    /// Writes bytes to a new temporary file and returns its path.
    static func temporaryFile(_ bytes: some Sequence<UInt8>) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-body-\(UUID()).bin").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
