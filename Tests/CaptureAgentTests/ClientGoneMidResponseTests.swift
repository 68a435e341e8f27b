// Built with the Hummingbird and Vapor traits (on by default; Package.swift).
#if Hummingbird && Vapor && AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Vapor
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A client that closes its connection while a Hummingbird or Vapor service
/// is still writing a streamed response: the flow ends as failed, its
/// status kept, not as completed.
final class ClientGoneMidResponseTests: AgentTestCase, @unchecked Sendable {
    private var service: (any InboundService)?

    override func tearDown() async throws {
        await service?.stop()
    }

    func testAClientThatGoesAwayMidResponseEndsTheFlowAsFailed() async throws {
        service = try await HummingbirdScenarioService.start(captureInto: agent)
        try await leaveMidResponse()
    }

    func testAClientThatGoesAwayMidVaporStreamEndsTheFlowAsFailed() async throws {
        service = try await VaporScenarioService.start(captureInto: agent) { app in
            app.get("slow") { _ async -> Vapor.Response in
                Vapor.Response(status: .ok, body: .init(asyncStream: { writer in
                    for _ in 0..<200 {
                        try await writer.write(.buffer(ByteBuffer(repeating: 0x61, count: 64 * 1024)))
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    try await writer.write(.end)
                }))
            }
        }
        try await leaveMidResponse()
    }

    /// Asks for `/slow`, closes the connection once the response has begun,
    /// and checks how the flow ended.
    private func leaveMidResponse() async throws {
        let service = try XCTUnwrap(service)
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
