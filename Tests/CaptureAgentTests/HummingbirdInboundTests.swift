// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import AsyncHTTPClient
import CaptureAgentHummingbird
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Inbound capture in a real Hummingbird 2 service on loopback, driven by
/// real clients (AsyncHTTPClient, curl, a raw socket). Each scenario runs
/// against the same routes without and with `InboundCaptureMiddleware`; the
/// clients must see the same thing, and the log must say what they saw.
final class HummingbirdInboundTests: AgentTestCase, @unchecked Sendable {
    private var plain: RunningService!
    private var captured: RunningService!

    /// Starts both services; each test calls it first (the agent exists only
    /// once the synchronous set-up has run, after XCTest's async one).
    private func startServices() async throws {
        plain = try await RunningService.start(captureInto: nil)
        captured = try await RunningService.start(captureInto: agent)
    }

    override func tearDown() async throws {
        await plain?.stop()
        await captured?.stop()
    }

    private func both(_ method: HTTPMethod = .GET, _ path: String, body: [UInt8]? = nil) async throws -> ClientView {
        let without = try await ClientView.fetch(method, "http://127.0.0.1:\(plain.port)\(path)", body: body)
        let with = try await ClientView.fetch(method, "http://127.0.0.1:\(captured.port)\(path)", body: body)
        XCTAssertEqual(with, without, "the client saw a different answer with capture on")
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
        XCTAssertTrue(flow.isInbound)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.request.url, "http://127.0.0.1:\(captured.port)/hello?name=z")
        XCTAssertEqual(flow.request.headers.first, HTTPHeader(name: "Host", value: "127.0.0.1:\(captured.port)"))
        XCTAssertEqual(flow.response?.statusCode, 200)
        XCTAssertEqual(flow.response?.headers.first { $0.name == "X-Served" }?.value, "1")
        XCTAssertEqual(flow.response?.body?.data, Data("hello".utf8))
        XCTAssertEqual(flow.state, .completed)
        XCTAssertEqual(flow.source?.client, .hummingbird)
        let peer = try XCTUnwrap(flow.peer)
        XCTAssertTrue(peer.hasPrefix("127.0.0.1:"), peer)
        XCTAssertNotEqual(peer, "127.0.0.1:\(captured.port)", "the peer is the client, not the server")
        let timing = flow.timing
        XCTAssertNotNil(timing.requestSent)
        XCTAssertLessThanOrEqual(timing.requestSent ?? .infinity, timing.firstResponseByte ?? -1)
        XCTAssertLessThanOrEqual(timing.firstResponseByte ?? .infinity, timing.finished ?? -1)
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

    func testThrownErrorsAreRecordedAsTheStatusTheFrameworkSent() async throws {
        try await startServices()
        let teapot = try await both(.GET, "/refuse")
        XCTAssertEqual(teapot.status, 400)
        let boom = try await both(.GET, "/boom")
        XCTAssertEqual(boom.status, 500)
        let missing = try await both(.GET, "/no/such/route")
        XCTAssertEqual(missing.status, 404)
        let refused = await inboundFlow("/refuse"), failed = await inboundFlow("/boom"), unrouted = await inboundFlow("/no/such/route")
        XCTAssertEqual(refused?.response?.statusCode, 400)
        XCTAssertEqual(refused?.response?.body?.data, Data(teapot.body))
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
        XCTAssertEqual(flow.response?.body?.data, Data("chunk0\nchunk1\nchunk2\n".utf8))
    }

    func testCurlSeesTheSameAnswer() async throws {
        try await startServices()
        func curl(_ port: Int) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-s", "-i", "-X", "PUT", "--data-binary", "café", "http://127.0.0.1:\(port)/echo?x=1"]
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
        let found = await inboundFlow("/echo?x=1")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.request.method, "PUT")
        XCTAssertEqual(flow.request.body?.data, Data("café".utf8))
        XCTAssertTrue(flow.request.headers.contains { $0.name.lowercased() == "user-agent" && $0.value.hasPrefix("curl/") })
    }

    func testTheHandlerRunsInsideItsInboundFlow() async throws {
        try await startServices()
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(captured.port)/whoami", body: nil)
        let found = await inboundFlow("/whoami")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), flow.id.description)
        let outside = try await ClientView.fetch(.GET, "http://127.0.0.1:\(plain.port)/whoami", body: nil)
        XCTAssertEqual(String(decoding: outside.body, as: UTF8.self), "none")
        XCTAssertNil(CaptureAgent.currentInboundFlowID)
    }

    func testAClientThatGoesAwayMidResponseEndsTheFlowAsFailed() async throws {
        try await startServices()
        let socket = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: captured.port).get()
        try await socket.writeAndFlush(ByteBuffer(string: "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"))
        let responded = await waitUntil { self.inspector.flows.values.contains { $0.request.url.hasSuffix("/slow") && $0.response != nil } }
        XCTAssertTrue(responded)
        try await socket.close()
        let found = await inboundFlow("/slow")
        let flow = try XCTUnwrap(found)
        XCTAssertEqual(flow.state, .failed)
        XCTAssertEqual(flow.error?.domain, "netinspect.inbound")
        XCTAssertEqual(flow.response?.statusCode, 200)
    }
}

/// Requests made with the middleware while no inspector listens build
/// nothing and are counted as dropped.
final class HummingbirdInboundWithoutInspectorTests: XCTestCase {
    func testRequestsWithoutAnInspectorAreCountedAsDropped() async throws {
        let path = temporarySocketPath("hb-nobody")
        let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .unix(path: path)))
        defer { agent.stop() }
        let service = try await RunningService.start(captureInto: agent)
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/hello", body: nil)
        await service.stop()
        XCTAssertEqual(seen.status, 200)
        let counted = await waitUntil { agent.statistics.droppedEvents == 3 }
        XCTAssertTrue(counted, "dropped \(agent.statistics.droppedEvents)")
    }
}

/// A request context that knows the client's address, as a service that
/// wants peers in its log would declare.
struct PeerContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

struct Boom: Error {}

/// A Hummingbird service on 127.0.0.1 (a free port), with the test routes,
/// captured into `agent` when one is given.
final class RunningService: Sendable {
    let port: Int
    private let task: Task<Void, any Error>

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    static func start(
        captureInto agent: CaptureAgent?,
        routes: (Router<PeerContext>) -> Void = { _ in }
    ) async throws -> RunningService {
        let router = Router(context: PeerContext.self)
        if let agent { router.add(middleware: InboundCaptureMiddleware(agent: agent)) }
        routes(router)
        router.get("hello") { _, _ in
            Response(status: .ok, headers: [HTTPField.Name("X-Served")!: "1"], body: .init(byteBuffer: ByteBuffer(string: "hello")))
        }
        router.on("echo", method: .post, use: echo)
        router.on("echo", method: .put, use: echo)
        router.get("stream") { _, _ in
            Response(status: .ok, body: ResponseBody { writer in
                for index in 0..<3 {
                    if index > 0 { try await Task.sleep(for: .milliseconds(250)) }
                    try await writer.write(ByteBuffer(string: "chunk\(index)\n"))
                }
                try await writer.finish(nil)
            })
        }
        router.get("slow") { _, _ in
            Response(status: .ok, body: ResponseBody { writer in
                for _ in 0..<200 {
                    try await writer.write(ByteBuffer(repeating: 0x61, count: 64 * 1024))
                    try await Task.sleep(for: .milliseconds(20))
                }
                try await writer.finish(nil)
            })
        }
        router.get("refuse") { _, _ -> String in throw HTTPError(.badRequest, message: "no tea here") }
        router.get("boom") { _, _ -> String in throw Boom() }
        router.get("whoami") { _, _ in CaptureAgent.currentInboundFlowID?.description ?? "none" }

        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "test-service", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw CancellationError() }
        return RunningService(port: port, task: task)
    }

    @Sendable private static func echo(_ request: Request, _ context: PeerContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 22)
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: .init(byteBuffer: body))
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
#endif
