// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A captured call records the address its connection was bound to, and a
/// captured service that received it has that same text as its peer: what
/// netinspect links the two by, with nothing added to the traffic.
final class ConnectionAddressTests: AgentTestCase, @unchecked Sendable {
    private var service: HummingbirdScenarioService!

    override func tearDown() async throws {
        await service?.stop()
    }

    private func finished(_ predicate: @escaping (NetworkLog) -> Bool) async -> NetworkLog? {
        var found: NetworkLog?
        _ = await waitUntil { found = inspector.flows.values.first { $0.state.isFinal && predicate($0) }; return found != nil }
        return found
    }

    func testACallsLocalAddressIsThePeerOfTheRequestTheServiceReceived() async throws {
        service = try await HummingbirdScenarioService.start(captureInto: agent)
        var configuration = ahcConfiguration()
        agent.capture(&configuration)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let session = URLSession(configuration: sessionConfiguration(captured: true))
        defer { session.invalidateAndCancel() }

        // Two calls one after the other: the second goes on the first's
        // kept-alive connection, whose address the capture formats once.
        for via in ["ahc", "ahc-again"] {
            let response = try await httpClient.execute(HTTPClientRequest(url: "http://127.0.0.1:\(service.port)/text?via=\(via)"), timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 16)
        }
        _ = try await session.data(from: URL(string: "http://127.0.0.1:\(service.port)/text?via=urlsession")!)
        try await httpClient.shutdown()

        for via in ["ahc", "ahc-again", "urlsession"] {
            let call = await finished { !$0.isInbound && $0.request.url.hasSuffix("via=\(via)") }
            let received = await finished { $0.isInbound && $0.request.url.hasSuffix("via=\(via)") }
            let address = try XCTUnwrap(call?.localAddress, "\(via): the call recorded no local address")
            XCTAssertTrue(address.hasPrefix("127.0.0.1:"), address)
            XCTAssertEqual(received?.peer, address, via)
        }
    }
}
#endif
