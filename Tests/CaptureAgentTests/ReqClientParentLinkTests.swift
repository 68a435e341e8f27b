// Built with the Vapor trait (on by default; Package.swift).
#if Vapor && AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import Vapor
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A call a Vapor handler makes through `req.client`, with the agent's
/// client provider, is recorded as an outbound flow whose parent is the
/// inbound request being handled.
final class ReqClientParentLinkTests: AgentTestCase, @unchecked Sendable {
    private var service: VaporScenarioService?

    override func tearDown() async throws {
        await service?.stop()
    }

    private func finished(_ suffix: String) async -> NetworkLog? {
        var found: NetworkLog?
        _ = await waitUntil { found = self.inspector.finishedFlows(urlSuffix: suffix).last; return found != nil }
        return found
    }

    func testACallThroughReqClientNamesTheInboundFlowAsItsParent() async throws {
        let service = try await VaporScenarioService.start(captureInto: agent) { app in
            app.get("checkout") { request async throws -> String in
                let target = request.headers.first(name: "X-Target") ?? ""
                let response = try await request.client.get(URI(string: target))
                return "inventory said \(response.status.code)"
            }
        }
        self.service = service
        await service.useCapturedClient(agent)
        let target = server.url("/text?from=checkout").absoluteString
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/checkout", body: nil, headers: [("X-Target", target)])
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "inventory said 200")
        let checkout = await finished("/checkout")
        let call = await finished("/text?from=checkout")
        let parent = try XCTUnwrap(checkout?.id)
        XCTAssertEqual(call?.parentID, parent)
        XCTAssertEqual(call?.source?.client, .vaporClient)
        XCTAssertNil(call?.direction, "the call is outbound")
    }
}
#endif
