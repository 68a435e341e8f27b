// Built with the AsyncHTTPClient and OpenAPI traits (on by default; Package.swift).
#if AsyncHTTPClient && OpenAPI
import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Runs the `ServerClientDemo` executable in a fresh process against the
/// loopback server, and checks docs/AGENT.md shows its snippets verbatim.
final class ServerClientDemoTests: XCTestCase {
    func testTheDemoCapturesBothAsyncHTTPClientAPIsAndTheOpenAPIClient() throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let inspector = try TestInspector(path: temporarySocketPath("scdemo"))
        defer { inspector.kill() }
        let run = try ExampleProgram(name: "ServerClientDemo").run(arguments: [server.url("/text").absoluteString], inspector: inspector)
        XCTAssertFalse(run.timedOut, "ServerClientDemo did not finish")
        XCTAssertEqual(run.status, 0, run.output + run.errorOutput)
        XCTAssertEqual(server.requests.map(\.uri), ["/text", "/text", "/text/"])
        let flows = inspector.flows.values.filter { $0.state == .completed }.sorted { $0.timing.startedAt < $1.timing.startedAt }
        XCTAssertEqual(flows.map(\.source?.client), [.asyncHTTPClient, .asyncHTTPClient, .openAPI], "\(flows)")
        XCTAssertEqual(flows.last?.source?.operationID, "getRoot")
        XCTAssertEqual(flows.map(\.response?.statusCode), [200, 200, 200])
    }

    /// docs/AGENT.md's AsyncHTTPClient and OpenAPI snippets are the demo's marked parts.
    func testTheAgentGuideShowsTheDemoSnippetsVerbatim() throws {
        let guide = try ExampleProgram.agentGuide
        for name in ["ahc", "openapi"] {
            let snippet = try ExampleProgram(name: "ServerClientDemo").snippet(name)
            XCTAssertTrue(guide.contains("```swift\n" + snippet + "```"), "docs/AGENT.md lacks the \(name) snippet of Examples/ServerClientDemo/main.swift:\n\(snippet)")
        }
    }
}
#endif
