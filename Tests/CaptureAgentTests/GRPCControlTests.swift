// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgentGRPC
import Foundation
import GRPCCore
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A viewer's breakpoints on gRPC calls, with real grpc-swift 2 clients and
/// servers (in-process and HTTP/2 on loopback) and a real viewer socket.
/// Only one side is captured in each test, so one flow is held.
final class GRPCControlTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
        configuration.breakpointTimeout = name.contains("Timeout") ? 0.5 : 60
    }

    // MARK: - The viewer

    /// Flows of earlier rounds, which the viewer's look-ups skip.
    private var earlier: Set<FlowID> = []

    /// Starts a round with breakpoints on `filter`: off first, so the
    /// agent is seen to take the new filter.
    private func nextRound(intercepting filter: String) {
        earlier = Set(inspector.flows.keys)
        intercept(nil)
        intercept(filter)
    }

    /// The hold in `phase` of the flow whose URL ends with `method`, once there is one.
    private func hold(_ phase: HoldPhase, of method: String) -> FlowHold? {
        var found: FlowHold?
        _ = eventually {
            let flows = inspector.flows
            found = inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                guard case .held(let hold) = message, hold.phase == phase, !self.earlier.contains(hold.id),
                      flows[hold.id]?.request.url.hasSuffix("/\(method)") == true else { return nil }
                return hold
            }.first
            return found != nil
        }
        return found
    }

    private func finished(_ method: String) -> NetworkLog? {
        var found: NetworkLog?
        _ = eventually {
            found = inspector.flows.values.first { !self.earlier.contains($0.id) && $0.state.isFinal && $0.request.url.hasSuffix("/\(method)") }
            return found != nil
        }
        return found
    }

    private var releases: [FlowRelease] {
        inspector.allMessages.compactMap { message in
            if case .released(let release) = message, !self.earlier.contains(release.id) { release } else { nil }
        }
    }

    private static let killed = ClientSaw(code: Status.Code.cancelled.rawValue, message: "killed at a breakpoint")

    // MARK: - Kill

    func testAKillAtTheRequestEndsUnaryAndBidirectionalClientCallsCancelledBeforeTheServerSeesThem() async throws {
        for kind in [GRPCTransportKind.inProcess, .http2] {
            for (scenario, method) in [(GRPCScenario.unary, "Get"), (.bidirectional, "Chat")] {
                nextRound(intercepting: "~u Echo/\(method)")
                let run = try await runEchoScenarios(over: kind, client: agent, server: nil, [scenario]) { [self] in
                    let held = try XCTUnwrap(hold(.request, of: method), "\(kind) \(scenario)")
                    if scenario == .unary {
                        let flow = inspector.flows[held.id]
                        XCTAssertEqual(flow?.grpc?.messages.map(\.direction), [.request], "\(kind): the held call shows its message")
                    }
                    sendAsViewer(.kill(held.id))
                }
                XCTAssertEqual(run.client[scenario], Self.killed, "\(kind) \(scenario): the app sees CANCELLED")
                XCTAssertEqual(run.server, [], "\(kind) \(scenario): the server never saw the call")
                let flow = try XCTUnwrap(finished(method), "\(kind) \(scenario)")
                XCTAssertEqual(flow.state, .cancelled)
                XCTAssertEqual(flow.grpc?.status?.name, "CANCELLED")
                XCTAssertEqual(flow.error, FlowFailure.killed)
            }
        }
    }

    func testAKillAtTheRequestOfAServedCallAnswersCancelledWithoutRunningTheHandler() async throws {
        for kind in [GRPCTransportKind.inProcess, .http2] {
            nextRound(intercepting: "~u Echo/Get")
            let run = try await runEchoScenarios(over: kind, client: nil, server: agent, [.unary]) { [self] in
                let held = try XCTUnwrap(hold(.request, of: "Get"), "\(kind)")
                XCTAssertEqual(inspector.flows[held.id]?.direction, .inbound)
                sendAsViewer(.kill(held.id))
            }
            // (Over HTTP/2 the trailers-only answer's trailers carry `:status` and `content-type`.)
            XCTAssertEqual(run.client[.unary]?.code, Self.killed.code, "\(kind): the client sees CANCELLED")
            XCTAssertEqual(run.client[.unary]?.message, Self.killed.message, "\(kind)")
            XCTAssertEqual(run.server, [], "\(kind): the handler never ran")
            XCTAssertEqual(finished("Get")?.state, .cancelled, "\(kind)")
        }
    }

    func testAKillAtTheResponseKeepsTheAnswerFromTheApp() async throws {
        intercept("~u Echo/Get & ~s")
        let run = try await runEchoScenarios(over: .http2, client: agent, server: nil, [.unary]) { [self] in
            let held = try XCTUnwrap(hold(.response, of: "Get"))
            XCTAssertEqual(inspector.flows[held.id]?.grpc?.messages.map(\.direction), [.request, .response],
                           "the held response shows its message")
            sendAsViewer(.kill(held.id))
        }
        XCTAssertEqual(run.client[.unary], Self.killed)
        XCTAssertEqual(run.server.map(\.method), ["Get"], "the server answered; the app never got it")
        XCTAssertEqual(finished("Get")?.grpc?.status?.name, "CANCELLED")
    }

    // MARK: - Hold and resume

    func testAUnaryCallHeldAtRequestAndResponseAndResumedIsWhatItIsWithoutCapture() async throws {
        for kind in [GRPCTransportKind.inProcess, .http2] {
            for captured in ["client", "server"] {
                let plain = try await runEchoScenarios(over: kind, client: nil, server: nil, [.unary])
                nextRound(intercepting: "~u Echo/Get")
                let service = captured == "server"
                let run = try await runEchoScenarios(over: kind, client: service ? nil : agent, server: service ? agent : nil,
                                                     [.unary]) { [self] in
                    let request = try XCTUnwrap(hold(.request, of: "Get"), "\(kind) \(captured)")
                    let message = inspector.flows[request.id]?.grpc?.messages.first?.body.data ?? Data()
                    XCTAssertEqual(try? EchoRequest(protobuf: Array(message)), EchoRequest(text: "hi"), "\(kind) \(captured)")
                    sendAsViewer(.resume(FlowResume(id: request.id)))
                    let response = try XCTUnwrap(hold(.response, of: "Get"), "\(kind) \(captured)")
                    XCTAssertEqual(response.response?.headers.first { $0.name == "x-served" }?.value, "1")
                    sendAsViewer(.resume(FlowResume(id: response.id)))
                }
                XCTAssertEqual(run.client[.unary], plain.client[.unary], "\(kind) \(captured): the app sees what it sees without capture")
                XCTAssertEqual(run.server, plain.server, "\(kind) \(captured)")
                XCTAssertEqual(plain.client[.unary]?.messages, [EchoResponse(text: "echo: hi", index: 1)])
                let flow = try XCTUnwrap(finished("Get"), "\(kind) \(captured)")
                XCTAssertEqual(flow.grpc?.status?.name, "OK")
                XCTAssertNil(flow.changes, "nothing was changed")
                XCTAssertEqual(releases.map(\.reason), [.resumed, .resumed], "\(kind) \(captured)")
                if kind == .http2 && service {
                    // A served call's URL names the authority the client asked for.
                    let url = try XCTUnwrap(URL(string: flow.request.url))
                    XCTAssertEqual("\(url.host ?? ""):\(url.port ?? 0)", flow.request.headers.first { $0.name == ":authority" }?.value)
                }
            }
        }
    }

    func testABreakpointTimeoutLetsTheCallGoOnUnchanged() async throws {
        let plain = try await runEchoScenarios(over: .http2, client: nil, server: nil, [.unary])
        intercept("~u Echo/Get")
        let run = try await runEchoScenarios(over: .http2, client: agent, server: nil, [.unary])
        XCTAssertEqual(run.client[.unary], plain.client[.unary])
        XCTAssertEqual(run.server, plain.server)
        XCTAssertTrue(eventually { self.releases.count == 2 })
        XCTAssertEqual(releases.map(\.reason), [.timeout, .timeout], "request and response each timed out")
    }

    func testTheViewerGoingAwayReleasesAHeldCallUnchanged() async throws {
        let plain = try await runEchoScenarios(over: .http2, client: nil, server: nil, [.bidirectional])
        intercept("~u Echo/Chat")
        let run = try await runEchoScenarios(over: .http2, client: agent, server: nil, [.bidirectional]) { [self] in
            XCTAssertNotNil(hold(.request, of: "Chat"))
            inspector.dropConnections()
        }
        XCTAssertEqual(run.client[.bidirectional], plain.client[.bidirectional])
        XCTAssertEqual(run.server, plain.server)
        XCTAssertEqual(agent.breakpoints.heldCount, 0)
    }
}

/// An app that did not opt in to control: a viewer's breakpoints never hold its gRPC calls.
final class GRPCControlNotOptedInTests: AgentTestCase, @unchecked Sendable {
    func testAnAppThatDidNotOptInIsNeverHeld() async throws {
        let viewer = inspector.latestConnection()
        inspector.write(ViewerMessage.intercept("~u Echo").frame(), toConnection: viewer)
        inspector.waitUntilRead(by: agent, connection: viewer)
        XCTAssertFalse(agent.breakpoints.isActive)
        let plain = try await runEchoScenarios(over: .http2, capturedInto: nil)
        let captured = try await runEchoScenarios(over: .http2, capturedInto: agent)
        for scenario in GRPCScenario.allCases {
            XCTAssertEqual(captured.client[scenario], plain.client[scenario], "\(scenario)")
        }
        XCTAssertEqual(captured.server.count, plain.server.count)
        XCTAssertTrue(inspector.allMessages.allSatisfy { if case .held = $0 { false } else { true } }, "nothing was held")
    }
}
#endif
