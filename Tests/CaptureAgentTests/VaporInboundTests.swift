// Built with the Vapor trait (on by default; Package.swift).
#if Vapor && AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentVapor
import Foundation
import NIOCore
import NIOHTTP1
import Vapor
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Inbound capture in a real Vapor 4 application on loopback, driven by real
/// clients (AsyncHTTPClient, curl). Each scenario runs against the same
/// routes without and with `InboundCaptureMiddleware`; the clients must see
/// the same thing, and the log must say what they saw.
final class VaporInboundTests: AgentTestCase, @unchecked Sendable {
    private var plain: VaporScenarioService!
    private var captured: VaporScenarioService!

    private func startServices() async throws {
        plain = try await VaporScenarioService.start(captureInto: nil, routes: Self.routes)
        captured = try await VaporScenarioService.start(captureInto: agent, routes: Self.routes)
    }

    override func tearDown() async throws {
        await plain?.stop()
        await captured?.stop()
    }

    /// The routes beside the scenario ones: errors, a stream, the handler's
    /// own context, and a call made while handling.
    private static func routes(_ app: Application) {
        app.get("hello") { _ async -> Vapor.Response in
            Vapor.Response(status: .ok, headers: ["X-Served": "1"], body: "hello")
        }
        app.get("refuse") { _ async throws -> String in throw Abort(.badRequest, reason: "no tea here") }
        app.get("boom") { _ async throws -> String in throw VaporBoom() }
        app.get("stream") { _ async -> Vapor.Response in
            Vapor.Response(status: .ok, body: .init(asyncStream: { writer in
                for index in 0..<3 {
                    if index > 0 { try await Task.sleep(for: .milliseconds(250)) }
                    try await writer.write(.buffer(ByteBuffer(string: "chunk\(index)\n")))
                }
                try await writer.write(.end)
            }))
        }
        app.get("whoami") { _ async -> String in CaptureAgent.currentInboundFlowID?.description ?? "none" }
        app.get("checkout") { request async throws -> String in
            let target = request.headers.first(name: "X-Target") ?? ""
            let response = try await request.client.get(URI(string: target))
            return "inventory said \(response.status.code)"
        }
    }

    private func both(_ method: NIOHTTP1.HTTPMethod = .GET, _ path: String, body: [UInt8]? = nil) async throws -> ClientView {
        let without = try await ClientView.fetch(method, "http://127.0.0.1:\(plain.port)\(path)", body: body)
        let with = try await ClientView.fetch(method, "http://127.0.0.1:\(captured.port)\(path)", body: body)
        // Vapor's error middleware writes its JSON keys in no fixed order.
        XCTAssertEqual(with.normalized, without.normalized, "the client saw a different answer with capture on")
        return with
    }

    private func inboundFlow(_ suffix: String) async -> NetworkLog? {
        var found: NetworkLog?
        _ = await waitUntil { found = self.inspector.finishedFlows(urlSuffix: suffix).last; return found != nil }
        return found
    }

    func testAGetIsRecordedAsTheClientAddressedIt() async throws {
        try await startServices()
        let seen = try await both(.GET, "/hello?name=z")
        XCTAssertEqual(seen.status, 200)
        let found = await inboundFlow("/hello?name=z")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.direction, .inbound)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.request.url, "http://127.0.0.1:\(captured.port)/hello?name=z")
        XCTAssertEqual(flow.response?.statusCode, 200)
        XCTAssertEqual(flow.response?.headers.first { $0.name == "X-Served" }?.value, "1")
        XCTAssertEqual(flow.response?.body?.data, Data("hello".utf8))
        XCTAssertEqual(flow.state, .completed)
        XCTAssertEqual(flow.source?.client, .vapor)
        let peer = try XCTUnwrap(flow.peer)
        XCTAssertTrue(peer.hasPrefix("127.0.0.1:"), peer)
        XCTAssertNotEqual(peer, "127.0.0.1:\(captured.port)", "the peer is the client, not the server")
    }

    func testAnUploadIsEchoedUnchangedAndItsBodyRecordedWithItsTrueSize() async throws {
        try await startServices()
        let upload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let seen = try await both(.POST, "/echo", body: upload)
        XCTAssertEqual(seen.body, upload)
        let found = await inboundFlow("/echo")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.request.body?.size, upload.count)
        XCTAssertEqual(flow.request.body?.data.prefix(16), Data(upload.prefix(16)))
        XCTAssertEqual(flow.response?.body?.size, upload.count)
    }

    func testErrorsAndUnknownRoutesAreRecordedAsTheStatusVaporSent() async throws {
        try await startServices()
        let refused = try await both(.GET, "/refuse")
        XCTAssertEqual(refused.status, 400)
        let boom = try await both(.GET, "/boom")
        XCTAssertEqual(boom.status, 500)
        let missing = try await both(.GET, "/no/such/route")
        XCTAssertEqual(missing.status, 404)
        let refusedFlow = await inboundFlow("/refuse"), failed = await inboundFlow("/boom"), unrouted = await inboundFlow("/no/such/route")
        XCTAssertEqual(refusedFlow?.response?.statusCode, 400)
        XCTAssertEqual(refusedFlow?.response?.body?.data, Data(refused.body), "the body Vapor's error middleware wrote")
        XCTAssertEqual(failed?.response?.statusCode, 500)
        XCTAssertEqual(unrouted?.response?.statusCode, 404)
    }

    func testAStreamedResponseStillStreamsChunkByChunk() async throws {
        try await startServices()
        for port in [plain.port, captured.port] {
            let arrivals = try await ClientView.chunkArrivals("http://127.0.0.1:\(port)/stream")
            XCTAssertEqual(arrivals.count, 3, "port \(port): \(arrivals)")
            for (earlier, later) in zip(arrivals, arrivals.dropFirst()) {
                XCTAssertGreaterThan(later - earlier, 0.15, "chunks were held back and sent together (port \(port))")
            }
        }
        let found = await inboundFlow("/stream")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.response?.statusCode, 200)
        XCTAssertEqual(flow.response?.body?.size ?? 0, 0, "Vapor gives a middleware no sight of a streamed body")
    }

    func testCurlSeesTheSameAnswer() async throws {
        try await startServices()
        func curl(_ port: Int) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-s", "-i", "-X", "POST", "--data-binary", "café", "http://127.0.0.1:\(port)/echo?x=1"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: output, as: UTF8.self).split(separator: "\r\n")
                .filter { !$0.lowercased().hasPrefix("date:") }.joined(separator: "\n")
        }
        let without = try curl(plain.port)
        XCTAssertTrue(without.hasSuffix("café"), without)
        XCTAssertEqual(try curl(captured.port), without)
        let recorded = await waitUntil { self.inspector.finishedFlows(urlSuffix: "/echo?x=1").last?.request.body?.data == Data("café".utf8) }
        XCTAssertTrue(recorded)
    }

    func testTheHandlerRunsInsideItsInboundFlow() async throws {
        try await startServices()
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(captured.port)/whoami", body: nil)
        let found = await inboundFlow("/whoami")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), flow.id.description)
        let outside = try await ClientView.fetch(.GET, "http://127.0.0.1:\(plain.port)/whoami", body: nil)
        XCTAssertEqual(String(decoding: outside.body, as: UTF8.self), "none")
    }

    func testACallThroughReqClientNamesTheInboundFlowAsItsParent() async throws {
        try await startServices()
        await captured.useCapturedClient(agent)
        let target = server.url("/text?from=checkout").absoluteString
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(captured.port)/checkout", body: nil, headers: [("X-Target", target)])
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "inventory said 200")
        let checkout = await inboundFlow("/checkout")
        let call = await inboundFlow("/text?from=checkout")
        let parent = try XCTUnwrap(checkout?.id)
        XCTAssertEqual(call?.parentID, parent)
        XCTAssertEqual(call?.source?.client, .vaporClient)
        XCTAssertNil(call?.direction, "the call is outbound")
    }
}

/// Requests made with the middleware while no inspector listens build
/// nothing and are counted as dropped.
final class VaporInboundWithoutInspectorTests: XCTestCase {
    func testRequestsWithoutAnInspectorAreCountedAsDropped() async throws {
        let path = temporarySocketPath("vapor-nobody")
        let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .unix(path: path)))
        defer { agent.stop() }
        let service = try await VaporScenarioService.start(captureInto: agent)
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/text", body: nil)
        await service.stop()
        XCTAssertEqual(seen.status, 200)
        let counted = await waitUntil { agent.statistics.droppedEvents == 3 }
        XCTAssertTrue(counted, "dropped \(agent.statistics.droppedEvents)")
    }
}

struct VaporBoom: Error {}
#endif
