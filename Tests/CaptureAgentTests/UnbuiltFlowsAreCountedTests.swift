import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent
#if GRPC
import CaptureAgentGRPC
import GRPCCore
import GRPCInProcessTransport
#endif

/// A flow that starts while no inspector is connected builds nothing and
/// counts, as dropped, exactly the events it would have sent: the same
/// exchange made with an inspector shows as many events as it counts
/// without one (produced = shown + counted), gRPC messages included.
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
}
