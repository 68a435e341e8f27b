// Built with the OpenAPI and AsyncHTTPClient traits (on by default; Package.swift).
#if OpenAPI && AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentOpenAPI
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime
import WireProtocol
import XCTest
@testable import CaptureAgent

/// `CaptureMiddleware` last in a real client's middleware chain
/// (`UniversalClient`, what generated clients call), over the real
/// AsyncHTTPClient transport, against the loopback server; every scenario
/// without and with the middleware.
final class OpenAPICaptureTests: AgentTestCase, @unchecked Sendable {
    /// Control allowed throughout: with no viewer rules or breakpoints, every
    /// comparison below must still find the app and the server unchanged.
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
    }
    /// What the app sees: the operation's output (status, fields, body) or the error.
    struct Outcome: Equatable {
        var status: Int?
        var headers: [String] = []
        var body: [UInt8] = []
        var error: String?
    }

    /// How the deserializer (the generated code's part) reads the response body.
    enum Reading: Sendable {
        case whole
        case firstChunkOnly
        case never
    }

    /// A middleware before the capture one, as an app's own would be: it sees
    /// the body the capture hands on, as generated code would.
    struct Recorder: ClientMiddleware {
        let seen: Locked<[String]>
        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            let (response, responseBody) = try await next(request, body, baseURL)
            seen.withLock { $0.append("response body: \(String(describing: responseBody?.length)), \(String(describing: responseBody?.iterationBehavior))") }
            return (response, responseBody)
        }
    }

    /// A transport that says what body it was handed, then sends through AsyncHTTPClient.
    struct WatchingTransport: ClientTransport {
        let inner: AsyncHTTPClientTransport
        let seen: Locked<[String]>
        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            seen.withLock { $0.append("request body: \(String(describing: body?.length)), \(String(describing: body?.iterationBehavior))") }
            return try await inner.send(request, body: body, baseURL: baseURL, operationID: operationID)
        }
    }

    func call(
        _ method: HTTPRequest.Method, path: String, body: HTTPBody? = nil, operationID: String,
        captured: Bool, baseURL: URL? = nil, reading: Reading = .whole, seen: Locked<[String]> = Locked([])
    ) async -> Outcome {
        var configuration = ahcConfiguration()
        configuration.timeout.connect = .milliseconds(500)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let transport = WatchingTransport(inner: AsyncHTTPClientTransport(configuration: .init(client: http, timeout: .seconds(30))), seen: seen)
        let middlewares: [any ClientMiddleware] = captured ? [Recorder(seen: seen), CaptureMiddleware(agent: agent)] : [Recorder(seen: seen)]
        let client = UniversalClient(serverURL: baseURL ?? server.url("/"), transport: transport, middlewares: middlewares)
        var outcome = Outcome()
        do {
            outcome = try await client.send(
                input: (),
                forOperation: operationID,
                serializer: { _ in
                    var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
                    request.headerFields[.accept] = "application/octet-stream"
                    request.headerFields[HTTPField.Name("X-Api-Key")!] = "k1"
                    return (request, body)
                },
                deserializer: { response, body in
                    var outcome = Outcome(status: response.status.code)
                    outcome.headers = response.headerFields.filter { $0.name != .date }.map { "\($0.name): \($0.value)" }
                    guard let body else { return outcome }
                    switch reading {
                    case .whole:
                        outcome.body = try await [UInt8](collecting: body, upTo: .max)
                    case .firstChunkOnly:
                        var iterator = body.makeAsyncIterator()
                        outcome.body = Array(try await iterator.next() ?? [])
                    case .never:
                        break
                    }
                    return outcome
                }
            )
        } catch {
            outcome.error = "\(type(of: error)): \((error as? ClientError)?.underlyingError ?? error)"
        }
        try? await http.shutdown()
        return outcome
    }

    /// Runs the call without and with the middleware; returns the captured
    /// outcome and its flow.
    func compare(
        _ method: HTTPRequest.Method, path: String, body: @escaping () -> HTTPBody? = { nil }, operationID: String,
        baseURL: URL? = nil, reading: Reading = .whole, file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (Outcome, [ReceivedRequest], NetworkLog, [String]) {
        let plainSeen = Locked<[String]>([])
        _ = server.takeRequests()
        let plain = await call(method, path: path, body: body(), operationID: operationID, captured: false, baseURL: baseURL, reading: reading, seen: plainSeen)
        let plainRequests = server.takeRequests()
        let seen = Locked<[String]>([])
        let before = Set(inspector.flows.keys)
        let outcome = await call(method, path: path, body: body(), operationID: operationID, captured: true, baseURL: baseURL, reading: reading, seen: seen)
        let requests = server.takeRequests()
        XCTAssertEqual(outcome, plain, "the app saw something else with the middleware", file: file, line: line)
        XCTAssertEqual(requests, plainRequests, "the server saw something else with the middleware", file: file, line: line)
        XCTAssertEqual(seen.current, plainSeen.current, "bodies kept their length and iteration behaviour", file: file, line: line)
        var flow: NetworkLog?
        eventually {
            flow = inspector.flows.values.first { !before.contains($0.id) && $0.state.isFinal && $0.source?.client == .openAPI }
            return flow != nil
        }
        return (outcome, requests, try XCTUnwrap(flow, "no finished OpenAPI flow", file: file, line: line), seen.current)
    }

    func testGETRecordsTheOperation() async throws {
        let (outcome, requests, flow, _) = try await compare(.get, path: "/text?x=1", operationID: "getText")
        XCTAssertEqual(outcome.status, 200)
        XCTAssertEqual(flow.source, CaptureSource(client: .openAPI, operationID: "getText"))
        XCTAssertEqual(flow.state, .completed)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.request.url, server.url("/text?x=1").absoluteString)
        XCTAssertEqual(flow.request.headers, [HTTPHeader(name: "Accept", value: "application/octet-stream"), HTTPHeader(name: "X-Api-Key", value: "k1")])
        XCTAssertEqual(requests.count, 1)
        XCTAssertEqual(flow.response?.statusCode, 200)
        XCTAssertEqual(flow.response?.body?.data, Data(outcome.body))
        XCTAssertEqual(flow.response?.body?.size, outcome.body.count)
        XCTAssertEqual(flow.response?.mimeType, "text/plain")
        let timing = flow.timing
        XCTAssertNotNil(timing.firstResponseByte)
        XCTAssertLessThanOrEqual(timing.firstResponseByte ?? 0, timing.finished ?? 0)
    }

    func testPOSTWithAStreamedBodyKeepsLengthAndIterationBehaviour() async throws {
        let payload = TestHTTPServer.pattern(count: 100_000)
        let (outcome, requests, flow, seen) = try await compare(.post, path: "/echo", body: {
            let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
                for start in stride(from: 0, to: payload.count, by: 8192) { continuation.yield(payload[start ..< min(start + 8192, payload.count)]) }
                continuation.finish()
            }
            return HTTPBody(stream, length: .unknown)
        }, operationID: "echo")
        XCTAssertEqual(outcome.body, payload)
        XCTAssertEqual(requests.first?.body, payload)
        XCTAssertEqual(flow.request.body?.data, Data(payload))
        XCTAssertEqual(flow.request.body?.size, payload.count)
        XCTAssertEqual(flow.response?.body?.size, payload.count)
        XCTAssertNotNil(flow.timing.requestSent)
        XCTAssertTrue(seen.contains("request body: Optional(OpenAPIRuntime.HTTPBody.Length.unknown), Optional(OpenAPIRuntime.IterationBehavior.single)"), "\(seen)")

        // A known length and a body that can be read twice stay so.
        let (_, _, known, knownSeen) = try await compare(.put, path: "/echo", body: { HTTPBody(payload) }, operationID: "put")
        XCTAssertTrue(knownSeen.contains("request body: Optional(OpenAPIRuntime.HTTPBody.Length.known(100000)), Optional(OpenAPIRuntime.IterationBehavior.multiple)"), "\(knownSeen)")
        XCTAssertEqual(known.request.body?.size, payload.count)
    }

    func testErrorStatusAndBaseURLPath() async throws {
        let (outcome, _, flow, _) = try await compare(.get, path: "/404", operationID: "missing", baseURL: server.url("/status"))
        XCTAssertEqual(outcome.status, 404)
        XCTAssertEqual(flow.request.url, server.url("/status/404").absoluteString)
        XCTAssertEqual(flow.response?.statusCode, 404)
        XCTAssertEqual(flow.state, .completed)
    }

    func testRefusedConnectionIsAFailedFlowAndTheErrorPassesThrough() async throws {
        let closed = try TestHTTPServer()
        let base = closed.url("/")
        closed.shutdown()
        let (outcome, _, flow, _) = try await compare(.get, path: "/refused", operationID: "refused", baseURL: base)
        XCTAssertNotNil(outcome.error)
        XCTAssertTrue(outcome.error?.hasPrefix("ClientError") ?? false, "the runtime's own error type reaches the app: \(outcome.error ?? "")")
        XCTAssertEqual(flow.state, .failed)
        XCTAssertNil(flow.response)
        XCTAssertFalse(flow.error?.message.isEmpty ?? true)
    }

    func testABodyTheAppStopsReadingOrNeverReads() async throws {
        let (_, _, partial, _) = try await compare(.get, path: "/binary/200000", operationID: "partial", reading: .firstChunkOnly)
        XCTAssertEqual(partial.state, .cancelled)
        XCTAssertLessThan(partial.response?.body?.size ?? .max, 200_000)
        XCTAssertEqual(partial.response?.statusCode, 200)

        let (_, _, unread, _) = try await compare(.get, path: "/binary/5000", operationID: "unread", reading: .never)
        XCTAssertEqual(unread.state, .completed)
        XCTAssertEqual(unread.response?.statusCode, 200)
        XCTAssertEqual(unread.response?.body?.size ?? 0, 0, "the middleware never reads a body itself")
    }

    func testTheCaptureLimitAndRedactionApply() async throws {
        agent.stop()
        agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.bodyCaptureLimit = 1000
            $0.redactedHeaders.insert("X-Api-Key")
            $0.redactedQueryItems = ["token"]
        })
        XCTAssertTrue(eventually { agent.isConnected })
        let (outcome, _, flow, _) = try await compare(.get, path: "/binary/50000?token=t", operationID: "big")
        XCTAssertEqual(outcome.body.count, 50_000)
        XCTAssertEqual(flow.response?.body?.size, 50_000)
        XCTAssertEqual(flow.response?.body?.data, Data(outcome.body.prefix(1000)))
        XCTAssertEqual(flow.response?.body?.isTruncated, true)
        XCTAssertEqual(flow.request.headers.first { $0.name == "X-Api-Key" }?.value, "<redacted>")
        XCTAssertTrue(flow.request.url.hasSuffix("?token=%3Credacted%3E"))
    }

    // MARK: - Rules and breakpoints (a viewer's control)

    private func push(_ message: ViewerMessage) {
        inspector.write(message.frame(), toConnection: 0)
    }

    private func holds(_ phase: HoldPhase) -> [FlowHold] {
        inspector.allMessages.compactMap { if case .held(let hold) = $0, hold.phase == phase { hold } else { nil } }
    }

    private func flow(_ id: FlowID) async throws -> NetworkLog {
        let finished = await waitUntil { self.inspector.flows[id]?.state.isFinal == true }
        XCTAssertTrue(finished, "flow \(id) never finished: \(String(describing: inspector.flows[id]?.state))")
        return try XCTUnwrap(inspector.flows[id], "flow \(id) never started")
    }

    private struct NoHold: Error, CustomStringConvertible {
        var description: String
    }

    private func waitForHold(_ phase: HoldPhase, count: Int = 1) async throws -> FlowHold {
        guard await waitUntil({ self.holds(phase).count >= count }) else {
            throw NoHold(description: "\(holds(phase).count) \(phase) holds arrived, not \(count)")
        }
        return holds(phase)[count - 1]
    }

    func testTheViewersRulesSendElsewhereSetHeadersAndAnswerLocally() async throws {
        let other = try TestHTTPServer()
        defer { other.shutdown() }
        let a = "127.0.0.1:\(server.port)", b = "127.0.0.1:\(other.port)"
        push(.rules([
            try TrafficRule(.mapRemote, spec: "|\(a)/text|\(b)/text"),
            try TrafficRule(.modifyHeaders, spec: "/X-Env/staging"),
            TrafficRule(kind: .mapLocal, pattern: "/local", replacement: "./fixture.json",
                        files: [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data(#"{"mock":true}"#.utf8))]),
        ]))
        XCTAssertTrue(eventually { self.agent.rules.rules.count == 3 })

        let mapped = await call(.get, path: "/text?x=1", operationID: "mapped", captured: true)
        XCTAssertEqual(mapped.status, 200)
        XCTAssertEqual(mapped.body, TestHTTPServer.textBody)
        XCTAssertEqual(server.requests.count, 0, "nothing reached the app's server")
        let received = try XCTUnwrap(other.requests.first)
        XCTAssertEqual(received.uri, "/text?x=1")
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-env" }?.value, "staging")
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-api-key" }?.value, "k1", "the app's own fields stay")

        let seen = Locked<[String]>([])
        let local = await call(.get, path: "/local/item", operationID: "local", captured: true, seen: seen)
        XCTAssertEqual(local.status, 200)
        XCTAssertEqual(local.body, Array(#"{"mock":true}"#.utf8))
        XCTAssertFalse(seen.current.contains { $0.hasPrefix("request body") }, "answered before the transport")
        XCTAssertEqual(other.requests.count, 1)

        var flows: [NetworkLog] = []
        XCTAssertTrue(eventually {
            flows = self.inspector.flows.values.filter { $0.state.isFinal && $0.source?.client == .openAPI }
            return flows.count == 2
        })
        let mappedFlow = try XCTUnwrap(flows.first { $0.source?.operationID == "mapped" })
        XCTAssertEqual(mappedFlow.request.url, other.url("/text?x=1").absoluteString)
        XCTAssertEqual(mappedFlow.changes?.originalURL, server.url("/text?x=1").absoluteString)
        XCTAssertEqual(mappedFlow.changes?.rules.count, 2)
        let localFlow = try XCTUnwrap(flows.first { $0.source?.operationID == "local" })
        XCTAssertEqual(localFlow.changes?.mockedFrom, "./fixture.json")
        XCTAssertEqual(localFlow.response?.body?.data, Data(#"{"mock":true}"#.utf8))
    }

    func testABreakpointEditsTheRequestTheServerGetsAndTheResponseTheAppGets() async throws {
        push(.intercept("~u /echo"))
        XCTAssertTrue(eventually { self.agent.breakpoints.isActive })
        let call = Task { await self.call(.post, path: "/echo", body: HTTPBody("order=7"), operationID: "held", captured: true) }

        let request = try await waitForHold(.request)
        XCTAssertEqual(server.requests.count, 0, "held before the transport")
        var edited = try XCTUnwrap(inspector.flows[request.id]?.request)
        XCTAssertEqual(edited.headers.first("X-Api-Key"), "k1")
        edited.headers.append(HTTPHeader(name: "X-Edited", value: "yes"))
        edited.body = CapturedBody(data: Data("order=8".utf8))
        push(.resume(FlowResume(id: request.id, request: edited)))

        let response = try await waitForHold(.response)
        XCTAssertEqual(response.response?.body?.data, Data("order=8".utf8), "the server echoed the edited body")
        var answer = try XCTUnwrap(response.response)
        answer.statusCode = 201
        answer.body = CapturedBody(data: Data("changed".utf8))
        push(.resume(FlowResume(id: response.id, response: answer)))

        let outcome = await call.value
        XCTAssertEqual(outcome.status, 201)
        XCTAssertEqual(outcome.body, Array("changed".utf8))
        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.body, Array("order=8".utf8))
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-edited" }?.value, "yes")
        let flow = try await flow(request.id)
        XCTAssertEqual(flow.changes?.edited, [.request, .response])
        XCTAssertEqual(flow.changes?.originalResponse?.statusCode, 200)
        XCTAssertEqual(flow.response?.statusCode, 201)
    }

    func testKillingAHeldOperationThrowsACancellationAndSendsNothing() async throws {
        push(.intercept("~u /text"))
        XCTAssertTrue(eventually { self.agent.breakpoints.isActive })
        let call = Task { await self.call(.get, path: "/text", operationID: "killed", captured: true) }
        let held = try await waitForHold(.request)
        push(.kill(held.id))
        let outcome = await call.value
        XCTAssertTrue(outcome.error?.contains("CancellationError") == true, "\(String(describing: outcome.error))")
        XCTAssertEqual(server.requests.count, 0)
        let flow = try await flow(held.id)
        XCTAssertEqual(flow.state, .cancelled)
    }
}
#endif
