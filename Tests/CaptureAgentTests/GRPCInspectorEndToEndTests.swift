// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import Foundation
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A real grpc-swift 2 call captured by the agent and read by the real
/// `netinspect` in tmux, whose `--proto` names the captured message's
/// fields: the agent's bytes and the terminal's decoder agree.
final class GRPCInspectorEndToEndTests: XCTestCase, @unchecked Sendable {
    private var pane: TmuxSession?

    override func tearDown() {
        pane?.kill()
    }

    func testACapturedCallIsShownByMethodAndStatusWithItsMessagesNamedByTheDescriptorSet() async throws {
        let descriptorSet = ProtoFixtures.directory.appendingPathComponent("echo.pb").path
        let pane = try TmuxSession(name: #function, arguments: ["--proto", descriptorSet])
        try pane.waitUntilListening()
        self.pane = pane
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) { $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        _ = try pane.waitFor("1 agent")

        let run = try await runEchoScenarios(over: .http2, client: agent, server: nil, [.unary, .errorStatus])
        XCTAssertEqual(run.client[.unary]?.messages.first?.text, "echo: hi")
        var screen = try pane.waitFor("netinspect.test.Echo/Get  NOT_FOUND")
        XCTAssertTrue(screen.contains("gRPC"), screen)

        pane.send("f")
        pane.type("~gs OK")
        pane.send("Enter")
        _ = try pane.waitFor("1/2 flows")
        pane.send("Enter")
        pane.send("4")
        screen = try pane.waitFor(#"text (1): "echo: hi""#)
        XCTAssertTrue(screen.contains(#"text (1): "hi""#), "the request message, named by the descriptor set:\n\(screen)")
        XCTAssertTrue(screen.contains("netinspect.test.EchoRequest → netinspect.test.EchoResponse"), screen)
    }
}
#endif
