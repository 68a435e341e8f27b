// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import CaptureAgentOpenAPI
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Cause and effect: a captured Hummingbird handler makes one outbound call
/// with each client the agent captures; every outbound flow names the
/// inbound flow it was made for as its `parentID`, and a call made outside
/// any handler names none.
final class ParentLinkTests: AgentTestCase, @unchecked Sendable {
    private var service: HummingbirdScenarioService!
    private var httpClient: HTTPClient!
    private var session: URLSession!
    private var cachedSession: URLSession!

    /// The ways a handler calls out, each through a captured client.
    enum Via: String, CaseIterable {
        case ahcAsync = "ahc-async", ahcFuture = "ahc-future", openAPI = "openapi"
        case urlSessionAsync = "urlsession-async", urlSessionHandler = "urlsession-handler"
        /// A session with a URLCache, as `URLSessionConfiguration.default` has:
        /// corelibs then starts the protocol off the caller's task.
        case urlSessionCached = "urlsession-cached"

        /// Whether the client lets the agent see the caller's context: the
        /// future-based AsyncHTTPClient API runs no hook on the caller's task
        /// (docs/AGENT.md).
        var linksParent: Bool { self != .ahcFuture }
    }

    private func startService() async throws {
        var configuration = ahcConfiguration()
        agent.capture(&configuration)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let session = URLSession(configuration: sessionConfiguration(captured: true))
        let cachedConfiguration = sessionConfiguration(captured: true)
        cachedConfiguration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let cachedSession = URLSession(configuration: cachedConfiguration)
        self.httpClient = httpClient
        self.session = session
        self.cachedSession = cachedSession
        let agent = agent!
        let target = server.url("/text")
        service = try await HummingbirdScenarioService.start(captureInto: agent) { router in
            router.get("checkout/:via") { _, context -> String in
                let via = Via(rawValue: context.parameters.get("via") ?? "") ?? .ahcAsync
                return try await Self.callOut(via, to: target, httpClient: httpClient, session: session, cachedSession: cachedSession, agent: agent)
            }
        }
    }

    override func tearDown() async throws {
        await service?.stop()
        try? await httpClient?.shutdown()
        session?.invalidateAndCancel()
        cachedSession?.invalidateAndCancel()
    }

    private static func callOut(_ via: Via, to target: URL, httpClient: HTTPClient, session: URLSession, cachedSession: URLSession,
                                agent: CaptureAgent) async throws -> String {
        switch via {
        case .ahcAsync:
            let response = try await httpClient.execute(HTTPClientRequest(url: target.absoluteString), timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
            return "\(response.status.code)"
        case .ahcFuture:
            let response = try await httpClient.execute(request: HTTPClient.Request(url: target.absoluteString)).get()
            return "\(response.status.code)"
        case .openAPI:
            // HTTPClient.shared is not captured: one flow, the operation's.
            var origin = URLComponents(url: target, resolvingAgainstBaseURL: false)!
            let path = origin.percentEncodedPath + (origin.percentEncodedQuery.map { "?" + $0 } ?? "")
            origin.path = ""
            origin.query = nil
            let client = UniversalClient(serverURL: origin.url!, transport: AsyncHTTPClientTransport(),
                                         middlewares: [CaptureMiddleware(agent: agent)])
            return try await client.send(
                input: (), forOperation: "getText",
                serializer: { _ in (HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), nil) },
                deserializer: { response, body in
                    if let body { _ = try await [UInt8](collecting: body, upTo: 1 << 20) }
                    return "\(response.status.code)"
                }
            )
        case .urlSessionAsync, .urlSessionCached:
            let (_, response) = try await (via == .urlSessionCached ? cachedSession : session).data(from: target)
            return "\((response as? HTTPURLResponse)?.statusCode ?? 0)"
        case .urlSessionHandler:
            return try await withCheckedThrowingContinuation { continuation in
                session.dataTask(with: target) { _, response, error in
                    if let error { continuation.resume(throwing: error) } else {
                        continuation.resume(returning: "\((response as? HTTPURLResponse)?.statusCode ?? 0)")
                    }
                }.resume()
            }
        }
    }

    private func flows(where predicate: (NetworkLog) -> Bool, count: Int) async -> [NetworkLog] {
        var found: [NetworkLog] = []
        _ = await waitUntil { found = inspector.flows.values.filter { $0.state.isFinal && predicate($0) }; return found.count >= count }
        return found
    }

    func testEveryOutboundClientNamesTheInboundRequestItWasMadeFor() async throws {
        try await startService()
        for via in Via.allCases where via.linksParent {
            let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/checkout/\(via.rawValue)", body: nil)
            XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "200", via.rawValue)
            let inbound = await flows(where: { $0.isInbound && $0.request.url.hasSuffix("/checkout/\(via.rawValue)") }, count: 1)
            let parent = try XCTUnwrap(inbound.first?.id, via.rawValue)
            let children = await flows(where: { $0.parentID == parent }, count: 1)
            XCTAssertEqual(children.map(\.request.url), [server.url("/text").absoluteString], "\(via.rawValue): \(children)")
            XCTAssertEqual(children.first?.direction, nil, via.rawValue)
        }
    }

    func testTheFutureBasedAsyncHTTPClientAPICannotNameItsParent() async throws {
        try await startService()
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/checkout/ahc-future?pin", body: nil)
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "200")
        let inbound = await flows(where: { $0.isInbound && $0.request.url.hasSuffix("/checkout/ahc-future?pin") }, count: 1)
        XCTAssertEqual(inbound.count, 1)
        let calls = await flows(where: { !$0.isInbound && $0.request.url == self.server.url("/text").absoluteString }, count: 1)
        XCTAssertEqual(calls.map(\.parentID), [nil], "if AsyncHTTPClient now shows its caller's context, link it and update docs/AGENT.md")
    }

    func testACallOutsideAnyHandlerNamesNoParent() async throws {
        try await startService()
        for via in Via.allCases {
            _ = try await Self.callOut(via, to: server.url("/text?outside=\(via.rawValue)"), httpClient: httpClient, session: session,
                                       cachedSession: cachedSession, agent: agent)
        }
        let outside = await flows(where: { $0.request.url.contains("outside=") }, count: Via.allCases.count)
        XCTAssertGreaterThanOrEqual(outside.count, Via.allCases.count)
        XCTAssertTrue(outside.allSatisfy { $0.parentID == nil }, "\(outside.map(\.parentID))")
    }
}
#endif
