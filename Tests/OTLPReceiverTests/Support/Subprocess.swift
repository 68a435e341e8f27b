import Foundation
import TestSupport

/// curl and temporary files for the receiver's tests; programs run
/// through TestSupport's `ProgramRun`.
enum Subprocess {
    /// The reply curl got to a POST of `body`.
    struct Reply {
        var status: Int
        var body: Data
    }

    /// POSTs a file's bytes with curl (a real HTTP client) and returns the reply.
    static func post(_ url: String, file: String, headers: [String] = [], extra: [String] = []) throws -> Reply {
        let replyFile = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-reply-\(UUID()).bin").path
        defer { try? FileManager.default.removeItem(atPath: replyFile) }
        let result = try ProgramRun.collect(["/usr/bin/curl", "-s", "-o", replyFile, "-w", "%{http_code}", "--data-binary", "@\(file)"]
            + headers.flatMap { ["-H", $0] } + extra + [url])
        let body = (try? Data(contentsOf: URL(fileURLWithPath: replyFile))) ?? Data()
        return Reply(status: Int(result.output) ?? -1, body: body)
    }

    /// Writes bytes to a new temporary file and returns its path.
    static func temporaryFile(_ bytes: some Sequence<UInt8>) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-body-\(UUID()).bin").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
