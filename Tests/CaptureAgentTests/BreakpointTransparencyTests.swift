import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// While a viewer's breakpoint filter is set, every URLSession flow takes
/// the re-sending path (the one that can hold). A flow the filter does not
/// hold must look to the app exactly as without the agent: each scenario
/// without and with capture, compared as the app sees it (results, delegate
/// callbacks, byte counters, `currentRequest`, `task.error`).
final class BreakpointTransparencyTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        inspector.write(ViewerMessage.intercept("~u /never-matches-anything").frame(), toConnection: 0)
        XCTAssertTrue(eventually { self.agent.breakpoints.isActive })
    }

    func testUnheldFlowsAreUnchangedForEveryClientStyle() async throws {
        for style in ClientStyle.allCases {
            try await compare(style: style) { (URLRequest(url: self.server.url("/text?style=\(style)")), nil) }
            try await compare(style: style) {
                var request = URLRequest(url: self.server.url("/echo"))
                request.httpMethod = "POST"
                return (request, .data(Data("order=7".utf8)))
            }
            try await compare(style: style) { (URLRequest(url: self.server.url("/status/404")), nil) }
            try await compare(style: style) { (URLRequest(url: self.server.url("/redirect/302?to=/text")), nil) }
        }
        XCTAssertEqual(agent.capturePaths.inPlace, 0, "every flow took the re-sending path while the filter was set")
        XCTAssertGreaterThan(agent.capturePaths.resent, 0)
    }
}
