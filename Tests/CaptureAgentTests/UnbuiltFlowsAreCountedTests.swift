import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent
#if OpenAPI && AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentOpenAPI
import HTTPTypes
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime
#endif
#if GRPC
import CaptureAgentGRPC
import GRPCCore
import GRPCInProcessTransport
#endif
#if Vapor
import CaptureAgentVapor
import Logging
import Vapor
#endif

/// A flow that starts while no inspector is connected builds nothing and
/// counts, as dropped, exactly the events it would have sent: the same
/// exchange made with an inspector shows as many events as it counts
/// without one (produced = shown + counted), for every adapter, gRPC
/// messages included. What it does not build is checked where the app can
/// see it: a body handed on uncopied, no request kept for a replay.
final class UnbuiltFlowsAreCountedTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server?.shutdown()
    }

    /// Runs `scenario` with an inspector, until it has `flows` finished
    /// flows, and returns the flow events it was sent; then with a fresh
    /// agent and no inspector, and returns what that agent counted once it
    /// matches (or the timeout passes). `unbuilt` looks at the second agent
    /// before it stops.
    private func ledger(
        _ name: String, flows: Int, allowsControl: Bool = false,
        unbuilt: (CaptureAgent) -> Void = { _ in },
        _ scenario: (CaptureAgent) async throws -> Void
    ) async throws -> (shown: Int, counted: Int) {
        let inspector = try TestInspector(path: temporarySocketPath("unbuilt-\(name)"))
        defer { inspector.kill() }
        var configuration = CaptureAgent.Configuration(destination: .unix(path: inspector.path))
        configuration.allowsControl = allowsControl
        let shownAgent = try CaptureAgent.start(configuration)
        XCTAssertTrue(eventually { shownAgent.isConnected })
        try await scenario(shownAgent)
        _ = await waitUntil { inspector.flows.values.filter(\.state.isFinal).count >= flows }
        shownAgent.stop()
        let shown = inspector.allMessages.filter(\.isFlowEvent).count

        configuration.destination = .unix(path: temporarySocketPath("unbuilt-\(name)-nobody"))
        let countingAgent = try CaptureAgent.start(configuration)
        defer { countingAgent.stop() }
        XCTAssertFalse(countingAgent.isConnected)
        try await scenario(countingAgent)
        _ = await waitUntil { countingAgent.statistics.droppedEvents >= shown }
        unbuilt(countingAgent)
        return (shown, countingAgent.statistics.droppedEvents)
    }

    #if GRPC
    /// A server-streaming call: its start, response head, one request and
    /// three response messages, and its end.
    func testAnUnbuiltGRPCCallCountsItsMessages() async throws {
        let counts = try await ledger("grpc", flows: 1) { agent in
            let transport = InProcessTransport()
            let server = GRPCServer(transport: transport.server, services: [EchoService()])
            let client = GRPCClient(transport: agent.capture(transport.client))
            let tasks = [Task { try await server.serve() }, Task { try await client.runConnections() }]
            let saw = await call(.serverStreaming, on: client)
            XCTAssertEqual(saw.messages.count, 3)
            server.beginGracefulShutdown()
            client.beginGracefulShutdown()
            for task in tasks { _ = await task.result }
        }
        XCTAssertEqual(counts.shown, 7, "started, response, four messages, finished")
        XCTAssertEqual(counts.counted, counts.shown, "an unbuilt call counts its messages too")
    }
    #endif

    #if OpenAPI && AsyncHTTPClient
    /// An OpenAPI operation through the middleware: counted, and its
    /// response body reaches the app as the transport returned it, uncopied.
    func testAnUnbuiltOpenAPIOperationIsCountedAndItsBodyHandedOnUncopied() async throws {
        let bodies = Locked<[ObjectIdentifier]>([])
        let counts = try await ledger("openapi", flows: 1, unbuilt: { _ in
            let seen = bodies.current
            XCTAssertEqual(seen.count, 4, "the transport's and the app's body, in each run")
            XCTAssertNotEqual(seen[0], seen[1], "with an inspector, the app reads a copying body")
            XCTAssertEqual(seen[2], seen[3], "without one, the transport's own body")
        }) { agent in
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: ahcConfiguration())
            let transport = BodyWatchingTransport(inner: AsyncHTTPClientTransport(configuration: .init(client: http)), bodies: bodies)
            let client = UniversalClient(serverURL: server.url("/"), transport: transport,
                                         middlewares: [BodyWatchingMiddleware(bodies: bodies), CaptureMiddleware(agent: agent)])
            let text = try await client.send(
                input: (), forOperation: "getText",
                serializer: { _ in (HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/text"), nil) },
                deserializer: { _, body in try await String(collecting: XCTUnwrap(body), upTo: .max) }
            )
            XCTAssertFalse(text.isEmpty)
            try await http.shutdown()
        }
        XCTAssertEqual(counts.shown, 3)
        XCTAssertEqual(counts.counted, counts.shown)
    }
    #endif

    /// A task the agent re-sends (a delegate-style data task of a session
    /// with a data delegate): counted, and nothing kept for a replay no
    /// viewer can ask for.
    func testAnUnbuiltResentTaskIsCountedAndKeepsNothingForAReplay() async throws {
        let counts = try await ledger("resent", flows: 1, allowsControl: true, unbuilt: { agent in
            XCTAssertEqual(agent.capturePaths.resent, 1)
            XCTAssertEqual(agent.replays.count, 0, "a flow no viewer saw keeps no request for a replay")
        }) { agent in
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            agent.capture(configuration)
            let collector = BodyCollector()
            let session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            session.dataTask(with: server.url("/text?resent")).resume()
            let finished = await waitUntil { collector.finished.current }
            XCTAssertTrue(finished)
            XCTAssertFalse(collector.body.current.isEmpty)
        }
        XCTAssertEqual(counts.shown, 3)
        XCTAssertEqual(counts.counted, counts.shown)
    }

    #if Vapor
    /// A request through Vapor's `req.client` with the agent's provider:
    /// counted, and nothing kept for a replay no viewer can ask for.
    func testAnUnbuiltVaporClientRequestIsCountedAndKeepsNothingForAReplay() async throws {
        let url = server.url("/text?vapor").absoluteString
        let counts = try await ledger("vapor", flows: 1, allowsControl: true, unbuilt: { agent in
            XCTAssertEqual(agent.replays.count, 0, "a flow no viewer saw keeps no request for a replay")
        }) { agent in
            let app = try await Application.make(.testing)
            app.logger = Logger(label: "unbuilt-client", factory: { _ in SwiftLogNoOpLogHandler() })
            app.clients.use(.captured(by: agent))
            let response = try await app.client.get(URI(string: url))
            XCTAssertEqual(response.status, .ok)
            try await app.asyncShutdown()
        }
        XCTAssertEqual(counts.shown, 3)
        XCTAssertEqual(counts.counted, counts.shown)
    }
    #endif
}

#if OpenAPI && AsyncHTTPClient
/// A transport that notes which response body object it returns.
private struct BodyWatchingTransport: OpenAPIRuntime.ClientTransport {
    let inner: AsyncHTTPClientTransport
    let bodies: Locked<[ObjectIdentifier]>

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await inner.send(request, body: body, baseURL: baseURL, operationID: operationID)
        if let responseBody { bodies.withLock { $0.append(ObjectIdentifier(responseBody)) } }
        return (response, responseBody)
    }
}

/// A middleware before the capture one, as the app's own: notes which
/// response body object the app gets.
private struct BodyWatchingMiddleware: OpenAPIRuntime.ClientMiddleware {
    let bodies: Locked<[ObjectIdentifier]>

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        if let responseBody { bodies.withLock { $0.append(ObjectIdentifier(responseBody)) } }
        return (response, responseBody)
    }
}
#endif

/// A session's data delegate that keeps the body and notes the end.
private final class BodyCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let body = Locked(Data())
    let finished = Locked(false)

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        body.withLock { $0.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        finished.withLock { $0 = true }
    }
}
