import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Runs the `ServerClientDemo` executable in a fresh process against the
/// loopback server, and checks README.md shows its snippets verbatim.
final class ServerClientDemoTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testTheDemoCapturesBothAsyncHTTPClientAPIsAndTheOpenAPIClient() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ServerClientDemo")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw XCTSkip("ServerClientDemo is not built next to the test bundle; run `swift build --build-tests` first")
        }
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let inspector = try TestInspector(path: temporarySocketPath("scdemo"))
        defer { inspector.kill() }
        let process = Process()
        process.executableURL = executable
        process.arguments = [server.url("/text").absoluteString]
        process.environment = ProcessInfo.processInfo.environment.merging(["NETINSPECT": "unix:\(inspector.path)"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let finished = eventually(timeout: 30) { !process.isRunning }
        if !finished { process.terminate() }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(finished, "ServerClientDemo did not finish")
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertEqual(server.requests.map(\.uri), ["/text", "/text", "/text/"])
        let flows = inspector.flows.values.filter { $0.state == .completed }.sorted { $0.timing.startedAt < $1.timing.startedAt }
        XCTAssertEqual(flows.map(\.source?.client), [.asyncHTTPClient, .asyncHTTPClient, .openAPI], "\(flows)")
        XCTAssertEqual(flows.last?.source?.operationID, "getRoot")
        XCTAssertEqual(flows.map(\.response?.statusCode), [200, 200, 200])
    }

    /// README.md's AsyncHTTPClient and OpenAPI snippets are the demo's marked parts.
    func testTheReadmeShowsTheDemoSnippetsVerbatim() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let demo = try String(contentsOf: Self.root.appendingPathComponent("Examples/ServerClientDemo/main.swift"), encoding: .utf8)
        for name in ["ahc", "openapi"] {
            let begin = try XCTUnwrap(demo.range(of: "// snippet:\(name):begin\n"))
            let end = try XCTUnwrap(demo.range(of: "    // snippet:\(name):end"))
            let snippet = demo[begin.upperBound ..< end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
            XCTAssertTrue(readme.contains("```swift\n" + snippet + "```"), "README.md lacks the \(name) snippet of Examples/ServerClientDemo/main.swift:\n\(snippet)")
        }
    }
}
