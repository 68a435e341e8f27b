// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Runs the `ServiceDemo` executable (a Hummingbird service with inbound
/// capture) in a fresh process: each checkout it receives shows with the
/// inventory call it made; and docs/AGENT.md shows its snippet verbatim.
final class ServiceDemoTests: XCTestCase {
    func testTheDemoServiceShowsEachCheckoutWithTheCallItMade() throws {
        let inspector = try TestInspector(path: temporarySocketPath("svcdemo"))
        defer { inspector.kill() }
        let run = try ExampleProgram(name: "ServiceDemo").run(arguments: ["--self-test"], inspector: inspector)
        XCTAssertFalse(run.timedOut, "ServiceDemo did not finish")
        XCTAssertEqual(run.status, 0, run.output + run.errorOutput)

        let flows = inspector.flows.values.filter { $0.state == .completed }
        let checkouts = flows.filter { $0.isInbound && $0.request.url.hasSuffix("/checkout") }
        let inventory = flows.filter { $0.isInbound && $0.request.url.hasSuffix("/inventory/42") }
        let calls = flows.filter { !$0.isInbound }
        XCTAssertEqual(checkouts.count, 3, "\(flows.map(\.request.url))")
        XCTAssertEqual(inventory.count, 3)
        XCTAssertEqual(calls.count, 3)
        XCTAssertTrue(checkouts.allSatisfy { $0.request.body?.data == Data("{\"cart\":[42]}".utf8) })
        XCTAssertTrue(calls.allSatisfy { $0.source?.client == .asyncHTTPClient && $0.response?.statusCode == 200 })
        let checkoutIDs = Set(checkouts.map(\.id))
        XCTAssertEqual(Set(calls.compactMap(\.parentID)), checkoutIDs, "each checkout names the call it made")
    }

    /// docs/AGENT.md's Hummingbird snippet is the demo's marked part.
    func testTheAgentGuideShowsTheDemoSnippetVerbatim() throws {
        let snippet = try ExampleProgram(name: "ServiceDemo").snippet("hummingbird")
        XCTAssertTrue(try ExampleProgram.agentGuide.contains("```swift\n" + snippet + "```"),
                      "docs/AGENT.md lacks the snippet of Examples/ServiceDemo/main.swift:\n\(snippet)")
    }
}
#endif
