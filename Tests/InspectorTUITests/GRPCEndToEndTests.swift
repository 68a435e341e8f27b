import Foundation
import TestSupport
import WireProtocol
import XCTest

/// gRPC calls through the real binary in tmux: sent over the socket as an
/// agent sends them, named by `--proto`, filtered by status, decoded in the
/// gRPC tab. (A bad `--proto` file: ArgumentTests.)
final class GRPCEndToEndTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    private var descriptorSet: String { GRPCFixtures.directory.appendingPathComponent("echo.pb").path }

    func testACallIsListedByServiceMethodAndStatusAndItsMessagesAreNamedByTheDescriptorSet() throws {
        let ui = try TmuxSession(name: #function, arguments: ["--proto", descriptorSet])
        tmux = ui
        try ui.waitFor("listening on unix:\(ui.socketPath)")
        let agent = try WireClient(agentOn: ui.socketPath)
        for message in try GRPCFixtures.messages() { try agent.send(message) }
        var screen = try ui.waitFor("echo.Echo/Collect  DEADLINE_EXCEEDED")
        XCTAssertTrue(screen.contains("echo.Echo/Get  NOT_FOUND"), screen)
        XCTAssertFalse(screen.contains(" 200 "), "no call reads as HTTP 200:\n\(screen)")

        ui.send("f")
        ui.type("~gs not_found")
        ui.send("Enter")
        screen = try ui.waitFor("1/4 flows")
        XCTAssertFalse(screen.contains("echo.Echo/Collect"), screen)
        ui.send("c")
        try ui.waitFor("4/4 flows")
        ui.send("f")
        ui.type("~grpc 'Echo/Get$' & ~gs OK")
        ui.send("Enter")
        try ui.waitFor("1/4 flows")

        ui.send("Enter")
        ui.send("4")
        screen = try ui.waitFor("mood (3): GRUMPY (2)")
        XCTAssertTrue(screen.contains("echo.EchoRequest → echo.EchoResponse"), screen)
        XCTAssertTrue(screen.contains(#"text (1): "hello, gRPC""#), screen)
        XCTAssertTrue(screen.contains("Status    OK (0)"), screen)
    }
}
