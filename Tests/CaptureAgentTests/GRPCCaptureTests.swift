// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgentGRPC
import Foundation
import GRPCCore
import GRPCInProcessTransport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// gRPC capture with real grpc-swift 2 clients and servers: over the
/// in-process transport and over HTTP/2 on loopback, with and without TLS.
/// Every scenario runs without and with capture (client and server both
/// wrapped); the client and the server must see the same thing, and the
/// log must say what they saw.
final class GRPCCaptureTests: AgentTestCase, @unchecked Sendable {
    func testInProcessCallsAreTheSameWithCaptureAndRecorded() async throws {
        try await compareAndCheck(.inProcess)
    }

    func testHTTP2CallsAreTheSameWithCaptureAndRecorded() async throws {
        try await compareAndCheck(.http2)
    }

    func testHTTP2OverTLSCallsAreTheSameWithCaptureAndRecorded() async throws {
        try await compareAndCheck(.http2TLS)
    }

    private func compareAndCheck(_ kind: GRPCTransportKind) async throws {
        let without = try await runEchoScenarios(over: kind, capturedInto: nil)
        let with = try await runEchoScenarios(over: kind, capturedInto: agent)
        for scenario in GRPCScenario.allCases {
            XCTAssertEqual(with.client[scenario], without.client[scenario], "\(kind) \(scenario): the client saw something else with capture")
        }
        XCTAssertEqual(sortedCalls(with.server), sortedCalls(without.server), "\(kind): the server saw something else with capture")
        // What the client saw, to know the comparison compared something.
        XCTAssertEqual(with.client[.unary]?.messages, [EchoResponse(text: "echo: hi", index: 1)])
        XCTAssertEqual(with.client[.unary]?.trailers, ["x-trailer: done"])
        XCTAssertEqual(with.client[.serverStreaming]?.messages.count, 3)
        XCTAssertEqual(with.client[.bidirectional]?.messages.map(\.text), ["X", "Y"])
        XCTAssertEqual(with.client[.errorStatus]?.code, Status.Code.notFound.rawValue)
        XCTAssertEqual(with.client[.deadline]?.code, Status.Code.deadlineExceeded.rawValue)
        // grpc-swift 2.4.3 reports a call whose task was cancelled as UNKNOWN.
        XCTAssertEqual(with.client[.cancelled]?.code, Status.Code.unknown.rawValue)
        try await checkRecorded(kind)
    }

    private func sortedCalls(_ calls: [ServedCall]) -> [ServedCall] {
        calls.sorted { ($0.method, $0.messages.first?.text ?? "") < ($1.method, $1.messages.first?.text ?? "") }
    }

    /// The flows of the captured run: one per call on each side.
    private func checkRecorded(_ kind: GRPCTransportKind) async throws {
        let path = "/netinspect.test.Echo/"
        // Seven client calls and as many served (the cancelled and the
        // deadline calls reach the server too).
        _ = await waitUntil { self.inspector.finishedFlows(urlSuffix: "").filter { $0.grpc != nil }.count >= 14 }
        let flows = inspector.finishedFlows(urlSuffix: "").filter { $0.request.url.contains(path) }
        let client = flows.filter { $0.direction != .inbound }, server = flows.filter { $0.direction == .inbound }
        XCTAssertEqual(client.count, 7, "\(kind): \(client.map(\.request.url))")
        XCTAssertEqual(server.count, 7, "\(kind): \(server.map(\.request.url))")

        func flow(_ flows: [NetworkLog], _ method: String, _ text: String) -> NetworkLog? {
            flows.first { flow in
                flow.grpc?.method == method
                    && (try? EchoRequest(protobuf: Array(flow.grpc?.messages.first { $0.direction == .request }?.body.data ?? Data())))?.text == text
            }
        }
        for side in [client, server] {
            let unary = try XCTUnwrap(flow(side, "Get", "hi"), "\(kind)")
            XCTAssertEqual(unary.request.method, "POST")
            XCTAssertTrue(unary.request.url.hasSuffix("\(path)Get"), unary.request.url)
            XCTAssertTrue(unary.request.url.hasPrefix(kind == .http2TLS ? "https://" : "http://"), unary.request.url)
            XCTAssertEqual(unary.source?.client, .grpcSwift)
            XCTAssertEqual(unary.grpc?.service, "netinspect.test.Echo")
            XCTAssertEqual(unary.grpc?.kind, .unary)
            XCTAssertEqual(unary.request.headers.first { $0.name == "x-echo" }?.value, "abc")
            XCTAssertEqual(unary.request.headers.first { $0.name == "authorization" }?.value, "<redacted>", "metadata is redacted as headers are")
            XCTAssertEqual(unary.response?.statusCode, 200)
            XCTAssertEqual(unary.response?.headers.first { $0.name == "x-served" }?.value, "1")
            XCTAssertEqual(unary.grpc?.messages.map(\.direction), [.request, .response])
            XCTAssertEqual(unary.grpc?.messages.last?.body.data, Data(EchoResponse(text: "echo: hi", index: 1).protobuf))
            XCTAssertEqual(unary.grpc?.messages.first?.body.size, EchoRequest(text: "hi").protobuf.count)
            XCTAssertEqual(unary.grpc?.status, GRPCStatus(code: 0))
            XCTAssertEqual(unary.grpc?.trailers.first { $0.name == "x-trailer" }?.value, "done")
            XCTAssertEqual(unary.state, .completed)
            XCTAssertNotNil(unary.peer)
            let times = unary.grpc?.messages.map(\.at) ?? []
            XCTAssertEqual(times, times.sorted(), "messages are in order")

            let collect = try XCTUnwrap(flow(side, "Collect", "a"))
            XCTAssertEqual(collect.grpc?.kind, .clientStreaming)
            XCTAssertEqual(collect.grpc?.messages.map(\.direction), [.request, .request, .request, .response])
            let expand = try XCTUnwrap(flow(side, "Expand", "n"))
            XCTAssertEqual(expand.grpc?.messages.filter { $0.direction == .response }.count, 3)
            let chat = try XCTUnwrap(flow(side, "Chat", "x"))
            XCTAssertEqual(chat.grpc?.kind, .bidirectionalStreaming)
            XCTAssertEqual(chat.grpc?.messages.filter { $0.direction == .request }.count, 2)
            XCTAssertEqual(chat.grpc?.messages.filter { $0.direction == .response }.count, 2)
            let failed = try XCTUnwrap(flow(side, "Get", "fail"))
            XCTAssertEqual(failed.grpc?.status, GRPCStatus(code: 5, message: "no such echo"))
            XCTAssertEqual(failed.grpc?.status?.name, "NOT_FOUND")
            XCTAssertEqual(failed.grpc?.trailers.first { $0.name == "x-reason" }?.value, "test")
        }
        let slow = client.filter { $0.grpc?.method == "Get" && $0.grpc?.status?.isOK == false && $0.grpc?.status?.code != 5 }
        XCTAssertEqual(Set(slow.compactMap { $0.grpc?.status?.name }), ["DEADLINE_EXCEEDED", "CANCELLED"], "\(kind)")
        for flow in server {
            XCTAssertEqual(flow.direction, .inbound)
            XCTAssertNotNil(flow.grpc?.status, "\(kind): a served call always ends with a status")
        }
    }

    /// A call a captured server's handler makes through a captured client
    /// names the served call as its parent.
    func testACallMadeWhileServingNamesTheServedCallAsItsParent() async throws {
        let agent = self.agent!
        let inner = InProcessTransport()
        let innerServer = GRPCServer(transport: agent.capture(inner.server), services: [EchoService()])
        let innerClient = GRPCClient(transport: agent.capture(inner.client))
        let outer = InProcessTransport()
        let outerServer = GRPCServer(transport: agent.capture(outer.server), services: [EchoService(relay: {
            _ = try await innerClient.unary(request: ClientRequest(message: EchoRequest(text: "inner")), descriptor: Echo.get,
                                            serializer: Echo.requests, deserializer: Echo.responses, options: .defaults) { try $0.message }
        })])
        let outerClient = GRPCClient(transport: outer.client)
        let tasks = [Task { try await innerServer.serve() }, Task { try await innerClient.runConnections() },
                     Task { try await outerServer.serve() }, Task { try await outerClient.runConnections() }]
        let answer = try await outerClient.unary(request: ClientRequest(message: EchoRequest(text: "relay")), descriptor: Echo.get,
                                                 serializer: Echo.requests, deserializer: Echo.responses, options: .defaults) { try $0.message }
        XCTAssertEqual(answer.text, "echo: relay")
        for stopping in [innerServer.beginGracefulShutdown, innerClient.beginGracefulShutdown,
                         outerServer.beginGracefulShutdown, outerClient.beginGracefulShutdown] { stopping() }
        for task in tasks { _ = await task.result }

        _ = await waitUntil { self.inspector.finishedFlows(urlSuffix: "/Get").count >= 3 }
        let flows = inspector.finishedFlows(urlSuffix: "/Get")
        let served = try XCTUnwrap(flows.first { $0.direction == .inbound && $0.grpc?.messages.count == 2 && $0.parentID == nil
                && (try? EchoRequest(protobuf: Array($0.grpc!.messages[0].body.data)))?.text == "relay" })
        let relayed = try XCTUnwrap(flows.first { $0.direction != .inbound })
        XCTAssertEqual(relayed.parentID, served.id)
    }

    /// Past the per-call message limit, messages are counted, not sent.
    func testMessagesPastTheLimitAreCountedAsDropped() async throws {
        agent.stop()
        var configuration = CaptureAgent.Configuration(destination: .unix(path: inspector.path))
        configuration.messageLimit = 2
        configuration.bodyCaptureLimit = 3
        agent = try CaptureAgent.start(configuration)
        XCTAssertTrue(eventually { self.agent.isConnected })
        let transport = InProcessTransport()
        let server = GRPCServer(transport: transport.server, services: [EchoService()])
        let client = GRPCClient(transport: agent.capture(transport.client))
        let tasks = [Task { try await server.serve() }, Task { try await client.runConnections() }]
        let saw = await call(.serverStreaming, on: client)
        XCTAssertEqual(saw.messages.count, 3)
        server.beginGracefulShutdown()
        client.beginGracefulShutdown()
        for task in tasks { _ = await task.result }
        _ = await waitUntil { !self.inspector.finishedFlows(urlSuffix: "/Expand").isEmpty }
        let flow = try XCTUnwrap(inspector.finishedFlows(urlSuffix: "/Expand").first)
        XCTAssertEqual(flow.grpc?.messages.count, 2)
        XCTAssertEqual(flow.grpc?.droppedMessages, 2, "one request and three responses, two kept")
        let first = try XCTUnwrap(flow.grpc?.messages.first)
        XCTAssertEqual(first.body.data.count, 3)
        XCTAssertEqual(first.body.size, EchoRequest(text: "n", count: 3).protobuf.count)
        XCTAssertTrue(first.body.isTruncated)
    }
}
#endif
