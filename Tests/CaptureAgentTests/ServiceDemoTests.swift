// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Runs the `ServiceDemo` executable (a Hummingbird service with inbound
/// capture) in a fresh process, and checks README.md shows its snippet
/// verbatim.
final class ServiceDemoTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testTheDemoServiceShowsEachCheckoutWithTheCallItMade() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ServiceDemo")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw XCTSkip("ServiceDemo is not built next to the test bundle; run `swift build --build-tests` first")
        }
        let inspector = try TestInspector(path: temporarySocketPath("svcdemo"))
        defer { inspector.kill() }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--self-test"]
        process.environment = ProcessInfo.processInfo.environment.merging(["NETINSPECT": "unix:\(inspector.path)"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let finished = eventually(timeout: 30) { !process.isRunning }
        if !finished { process.terminate() }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(finished, "ServiceDemo did not finish")
        XCTAssertEqual(process.terminationStatus, 0, text)

        let flows = inspector.flows.values.filter { $0.state == .completed }
        let checkouts = flows.filter { $0.isInbound && $0.request.url.hasSuffix("/checkout") }
        let inventory = flows.filter { $0.isInbound && $0.request.url.hasSuffix("/inventory/42") }
        let calls = flows.filter { !$0.isInbound }
        XCTAssertEqual(checkouts.count, 3, "\(flows.map(\.request.url))")
        XCTAssertEqual(inventory.count, 3)
        XCTAssertEqual(calls.count, 3)
        XCTAssertTrue(checkouts.allSatisfy { $0.request.body?.data == Data("{\"cart\":[42]}".utf8) })
        XCTAssertTrue(calls.allSatisfy { $0.source?.client == .asyncHTTPClient && $0.response?.statusCode == 200 })
    }

    /// README.md's Hummingbird snippet is the demo's marked part.
    func testTheReadmeShowsTheDemoSnippetVerbatim() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let demo = try String(contentsOf: Self.root.appendingPathComponent("Examples/ServiceDemo/main.swift"), encoding: .utf8)
        let begin = try XCTUnwrap(demo.range(of: "// snippet:hummingbird:begin\n"))
        let end = try XCTUnwrap(demo.range(of: "// snippet:hummingbird:end"))
        let snippet = String(demo[begin.upperBound ..< end.lowerBound])
        XCTAssertTrue(readme.contains("```swift\n" + snippet + "```"), "README.md lacks the snippet of Examples/ServiceDemo/main.swift:\n\(snippet)")
    }
}
#endif
