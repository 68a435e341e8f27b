// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOCore
import XCTest
@testable import CaptureAgent

/// AsyncHTTPClient with the agent and no inspector, against every real
/// server of the matrix (``RealPeer``): the path where nothing is paired or
/// built (docs/AGENT.md, `tracing.tracer`). The app's first request right
/// after the agent starts and its tenth on a kept-alive connection get what
/// they get without the agent, and every exchange is counted: three events
/// each, none built.
final class RealPeersWithoutAnInspectorTests: XCTestCase {
    func testEveryRealServerAnswersAsWithoutTheAgentAndEveryExchangeIsCounted() async throws {
        for kind in RealPeer.Kind.allCases {
            let peer = try RealPeer(kind)
            defer { peer.stop() }
            let plain = try await tenRequests(to: peer, agent: nil)
            let agent = try CaptureAgent.start(.init(destination: .unix(path: temporarySocketPath("nobody-\(kind.hashValue)"))))
            defer { agent.stop() }
            XCTAssertFalse(agent.isRecording)
            // Right after the start: the first request is the agent's first too.
            let captured = try await tenRequests(to: peer, agent: agent)
            XCTAssertEqual(captured.count, plain.count, kind.rawValue)
            for (index, (with, without)) in zip(captured, plain).enumerated() {
                XCTAssertEqual(with.status, without.status, "\(kind.rawValue), request \(index + 1)")
                XCTAssertEqual(with.body, without.body, "\(kind.rawValue), request \(index + 1): what reached the server, as httpbin echoes it")
            }
            // Two APIs, ten exchanges each, three events an exchange.
            let counted = await waitUntil { agent.statistics.droppedEvents == 2 * 10 * 3 }
            XCTAssertTrue(counted, "\(kind.rawValue): \(agent.statistics)")
        }
    }

    /// Ten GETs in a row on one client, with each of its APIs (the async one
    /// has the tracer's span, the future one has none): status and body each.
    private func tenRequests(to peer: RealPeer, agent: CaptureAgent?) async throws -> [(status: UInt, body: [UInt8])] {
        var configuration = ahcConfiguration()
        agent?.capture(&configuration)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var outcomes: [(status: UInt, body: [UInt8])] = []
        do {
            for index in 1 ... 10 {
                var request = HTTPClientRequest(url: peer.url("/anything?nobody=\(index)").absoluteString)
                request.headers.add(name: "X-Probe", value: "\(index)")
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                outcomes.append((response.status.code, Array(body.readableBytesView)))
            }
            for index in 1 ... 10 {
                let request = try HTTPClient.Request(url: peer.url("/anything?nobody=future-\(index)").absoluteString)
                let response = try await client.execute(request: request).get()
                outcomes.append((response.status.code, response.body.map { Array($0.readableBytesView) } ?? []))
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return outcomes
    }
}
#endif
