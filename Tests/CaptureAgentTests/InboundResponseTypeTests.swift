// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgentHummingbird
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A captured service's response is recorded with its MIME type read as
/// every adapter reads it, whatever its `Content-Type` holds: an empty or
/// odd value neither stops the service nor goes unrecorded.
final class InboundResponseTypeTests: AgentTestCase, @unchecked Sendable {
    private var service: HummingbirdScenarioService!

    override func tearDown() async throws {
        await service?.stop()
    }

    func testAnyContentTypeIsRecordedAsItsEssence() async throws {
        let types = ["blank": "", "semicolon": ";", "odd": " Application/Problem+JSON ; charset=utf-8"]
        service = try await HummingbirdScenarioService.start(captureInto: agent) { router in
            for (path, type) in types {
                router.get("typed/\(path)") { _, _ in
                    Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: "x")))
                }
            }
        }
        let expected = ["blank": "", "semicolon": "", "odd": "application/problem+json"]
        for (path, essence) in expected.sorted(by: { $0.key < $1.key }) {
            let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/typed/\(path)", body: nil)
            XCTAssertEqual(seen.status, 200, path)
            var flow: NetworkLog?
            _ = await waitUntil { flow = self.inspector.finishedFlows(urlSuffix: "/typed/\(path)").last; return flow != nil }
            XCTAssertEqual(try XCTUnwrap(flow, path).response?.mimeType, essence, path)
        }
    }
}
#endif
