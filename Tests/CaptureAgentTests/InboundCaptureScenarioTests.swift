// Built with the Hummingbird or Vapor trait (both on by default; Package.swift).
#if (Hummingbird || Vapor) && AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// One table of capture scenarios for a service's inbound requests, run
/// against every server framework's middleware (``InboundFramework``), as
/// `ControlScenarioTests` runs one over the clients: the same routes without
/// and with capture, on loopback, driven by real clients (AsyncHTTPClient,
/// curl, a raw socket). The clients must see the same thing, and the log
/// must say what they saw.
final class InboundCaptureScenarioTests: AgentTestCase, @unchecked Sendable {
    private var running: [any InboundService] = []

    override func tearDown() async throws {
        for service in running { await service.stop() }
    }

    /// The framework's routes twice: without capture, and captured by the agent.
    private struct Pair {
        var plain: any InboundService
        var captured: any InboundService
    }

    private func services(_ framework: InboundFramework) async throws -> Pair {
        let pair = Pair(plain: try await framework.start(captureInto: nil), captured: try await framework.start(captureInto: agent))
        running += [pair.plain, pair.captured]
        return pair
    }

    /// The same request to both services; the client must see the same answer.
    private func both(_ services: Pair, _ method: HTTPMethod = .GET, _ path: String, body: [UInt8]? = nil,
                      file: StaticString = #filePath, line: UInt = #line) async throws -> ClientView {
        let without = try await ClientView.fetch(method, "http://127.0.0.1:\(services.plain.port)\(path)", body: body)
        let with = try await ClientView.fetch(method, "http://127.0.0.1:\(services.captured.port)\(path)", body: body)
        // Vapor's error middleware writes its JSON keys in no fixed order.
        XCTAssertEqual(with.normalized, without.normalized, "\(path): the client saw a different answer with capture on", file: file, line: line)
        return with
    }

    private func inboundFlow(_ suffix: String) async -> NetworkLog? {
        var found: NetworkLog?
        _ = await waitUntil { found = self.inspector.finishedFlows(urlSuffix: suffix).last; return found != nil }
        return found
    }

    func testAGetIsRecordedAsTheClientAddressedIt() async throws {
        for framework in InboundFramework.allCases {
            let services = try await services(framework)
            let port = services.captured.port
            let seen = try await both(services, .GET, "/text?via=\(framework)")
            XCTAssertEqual(seen.status, 200, "\(framework)")
            let found = await inboundFlow("/text?via=\(framework)")
            let flow = try XCTUnwrap(found, "\(framework)")
            XCTAssertEqual(flow.direction, .inbound, "\(framework)")
            XCTAssertTrue(flow.isInbound, "\(framework)")
            XCTAssertEqual(flow.request.method, "GET", "\(framework)")
            XCTAssertEqual(flow.request.url, "http://127.0.0.1:\(port)/text?via=\(framework)")
            // Field names as the framework gives them: Vapor keeps the client's case.
            XCTAssertEqual(flow.request.headers.first?.name.lowercased(), "host", "\(framework)")
            XCTAssertEqual(flow.request.headers.first?.value, "127.0.0.1:\(port)", "\(framework)")
            XCTAssertEqual(flow.response?.statusCode, 200, "\(framework)")
            XCTAssertEqual(flow.response?.headers.first("X-Served"), "1", "\(framework)")
            XCTAssertEqual(flow.response?.body?.data, Data("hello".utf8), "\(framework)")
            XCTAssertEqual(flow.state, .completed, "\(framework)")
            XCTAssertEqual(flow.source?.client, framework.recordedClient)
            let peer = try XCTUnwrap(flow.peer, "\(framework)")
            XCTAssertTrue(peer.hasPrefix("127.0.0.1:"), "\(framework): \(peer)")
            XCTAssertNotEqual(peer, "127.0.0.1:\(port)", "\(framework): the peer is the client, not the server")
            let timing = flow.timing
            XCTAssertNotNil(timing.requestSent, "\(framework)")
            XCTAssertLessThanOrEqual(timing.requestSent ?? .infinity, timing.firstResponseByte ?? -1, "\(framework)")
            XCTAssertLessThanOrEqual(timing.firstResponseByte ?? .infinity, timing.finished ?? -1, "\(framework)")
        }
    }

    func testAnUploadIsEchoedUnchangedAndItsBodyRecordedWithItsTrueSize() async throws {
        let upload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for framework in InboundFramework.allCases {
            let seen = try await both(try await services(framework), .POST, "/echo?via=\(framework)", body: upload)
            XCTAssertEqual(seen.body, upload, "\(framework)")
            let found = await inboundFlow("/echo?via=\(framework)")
            let flow = try XCTUnwrap(found, "\(framework)")
            XCTAssertEqual(flow.request.body?.size, upload.count, "\(framework)")
            XCTAssertEqual(flow.request.body?.data.prefix(16), Data(upload.prefix(16)), "\(framework)")
            XCTAssertEqual(flow.response?.body?.size, upload.count, "\(framework)")
        }
    }

    func testThrownErrorsAndUnknownRoutesAreRecordedAsTheStatusTheFrameworkSent() async throws {
        for framework in InboundFramework.allCases {
            let services = try await services(framework)
            let refused = try await both(services, .GET, "/refuse?via=\(framework)")
            XCTAssertEqual(refused.status, 400, "\(framework)")
            let boom = try await both(services, .GET, "/boom?via=\(framework)")
            XCTAssertEqual(boom.status, 500, "\(framework)")
            let missing = try await both(services, .GET, "/no/such/route?via=\(framework)")
            XCTAssertEqual(missing.status, 404, "\(framework)")
            let refusedFlow = await inboundFlow("/refuse?via=\(framework)")
            let failed = await inboundFlow("/boom?via=\(framework)"), unrouted = await inboundFlow("/no/such/route?via=\(framework)")
            XCTAssertEqual(refusedFlow?.response?.statusCode, 400, "\(framework)")
            XCTAssertEqual(refusedFlow?.response?.body?.data, Data(refused.body), "\(framework): the body the framework's error handling wrote")
            XCTAssertEqual(failed?.response?.statusCode, 500, "\(framework)")
            XCTAssertEqual(unrouted?.response?.statusCode, 404, "\(framework)")
        }
    }

    /// Each chunk reaches the client before the handler writes the next
    /// (``StreamGate``), with capture as without.
    func testAStreamedResponseStillStreamsChunkByChunk() async throws {
        let chunks = (0..<StreamGate.chunks).map(StreamGate.chunk).joined()
        for framework in InboundFramework.allCases {
            let services = try await services(framework)
            for (name, service) in [("without", services.plain), ("with capture", services.captured)] {
                let seen = try await ClientView.lockstep("http://127.0.0.1:\(service.port)/stream?via=\(framework)", gate: service.stream)
                XCTAssertEqual(seen.body, chunks, "\(framework) \(name)")
                XCTAssertEqual(seen.writtenWhenSeen, Array(1...StreamGate.chunks),
                               "\(framework) \(name): chunks were held back and arrived together")
            }
            let found = await inboundFlow("/stream?via=\(framework)")
            let flow = try XCTUnwrap(found, "\(framework)")
            XCTAssertEqual(flow.response?.statusCode, 200, "\(framework)")
            if framework.recordsStreamedBodies {
                XCTAssertEqual(flow.response?.body?.data, Data(chunks.utf8), "\(framework)")
            } else {
                XCTAssertEqual(flow.response?.body?.size ?? 0, 0, "\(framework) gives a middleware no sight of a streamed body")
            }
        }
    }

    func testCurlSeesTheSameAnswer() async throws {
        func curl(_ url: String) throws -> String {
            let (status, output) = try ProgramRun.run(["/usr/bin/env", "curl", "-s", "-i", "-X", "PUT", "--data-binary", "café", url])
            XCTAssertEqual(status, 0, output)
            return output.split(separator: "\r\n").filter { !$0.lowercased().hasPrefix("date:") }.joined(separator: "\n")
        }
        for framework in InboundFramework.allCases {
            let services = try await services(framework)
            let path = "/echo?x=1&via=\(framework)"
            let without = try curl("http://127.0.0.1:\(services.plain.port)\(path)")
            XCTAssertTrue(without.hasSuffix("café"), "\(framework): \(without)")
            XCTAssertEqual(try curl("http://127.0.0.1:\(services.captured.port)\(path)"), without, "\(framework)")
            let found = await inboundFlow(path)
            let flow = try XCTUnwrap(found, "\(framework)")
            XCTAssertEqual(flow.request.method, "PUT", "\(framework)")
            XCTAssertEqual(flow.request.body?.data, Data("café".utf8), "\(framework)")
            XCTAssertTrue(flow.request.headers.contains { $0.name.lowercased() == "user-agent" && $0.value.hasPrefix("curl/") }, "\(framework)")
        }
    }

    func testTheHandlerRunsInsideItsInboundFlow() async throws {
        for framework in InboundFramework.allCases {
            let services = try await services(framework)
            let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(services.captured.port)/whoami?via=\(framework)", body: nil)
            let found = await inboundFlow("/whoami?via=\(framework)")
            let flow = try XCTUnwrap(found, "\(framework)")
            XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), flow.id.description, "\(framework)")
            let outside = try await ClientView.fetch(.GET, "http://127.0.0.1:\(services.plain.port)/whoami", body: nil)
            XCTAssertEqual(String(decoding: outside.body, as: UTF8.self), "none", "\(framework)")
            XCTAssertNil(CaptureAgent.currentInboundFlowID, "\(framework)")
        }
    }
}

/// Requests a captured service receives while no inspector listens build
/// nothing and are counted as dropped, for every framework.
final class InboundCaptureWithoutInspectorTests: XCTestCase {
    func testRequestsWithoutAnInspectorAreCountedAsDropped() async throws {
        for framework in InboundFramework.allCases {
            let path = temporarySocketPath("\(framework)-nobody")
            let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .unix(path: path)))
            defer { agent.stop() }
            let service = try await framework.start(captureInto: agent)
            let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/text", body: nil)
            await service.stop()
            XCTAssertEqual(seen.status, 200, "\(framework)")
            let counted = await waitUntil { agent.statistics.droppedEvents == 3 }
            XCTAssertTrue(counted, "\(framework): dropped \(agent.statistics.droppedEvents)")
        }
    }
}
#endif
