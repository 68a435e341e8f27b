// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird && AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A client that closes its connection while a Hummingbird service is still
/// writing the response: the flow ends as failed, its status kept. (Vapor
/// gives its middleware no sight of a streamed body, so it cannot tell.)
final class ClientGoneMidResponseTests: AgentTestCase, @unchecked Sendable {
    private var service: HummingbirdScenarioService?

    override func tearDown() async throws {
        await service?.stop()
    }

    func testAClientThatGoesAwayMidResponseEndsTheFlowAsFailed() async throws {
        let service = try await HummingbirdScenarioService.start(captureInto: agent)
        self.service = service
        let socket = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: service.port).get()
        try await socket.writeAndFlush(ByteBuffer(string: "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"))
        let responded = await waitUntil { self.inspector.flows.values.contains { $0.request.url.hasSuffix("/slow") && $0.response != nil } }
        XCTAssertTrue(responded)
        try await socket.close()
        var found: NetworkLog?
        _ = await waitUntil { found = self.inspector.finishedFlows(urlSuffix: "/slow").last; return found != nil }
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.state, .failed)
        XCTAssertEqual(flow.error?.domain, "netinspect.inbound")
        XCTAssertEqual(flow.response?.statusCode, 200)
    }
}
#endif
