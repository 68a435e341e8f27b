import Foundation
import XCTest

/// `netinspect -- PROGRAM` in the terminal UI, in tmux: the program's flows
/// arrive live, its output stays off the screen until `O` shows it, its end
/// is in the status bar, and netinspect stays until `Q`.
final class WrappedCommandInTheUIEndToEndTests: XCTestCase {
    func testTheCommandsFlowsOutputAndExitAreShownAndNetinspectStaysUntilQ() throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        let ui = try TmuxSession(name: #function, arguments: ["--", demo, server.url("/echo").absoluteString], listens: false, fromAShell: true)
        defer { ui.kill() }

        let list = try ui.waitFor("command exited with status 0")
        let rows = list.split(separator: "\n").filter { $0.contains("/echo") && $0.contains(" 200 ") }
        XCTAssertEqual(rows.count, 3, "its three flows are listed:\n\(list)")
        XCTAssertFalse(list.contains("shared GET: 200"), "its output does not write over the UI:\n\(list)")

        ui.send("O")
        let output = try ui.waitFor("Output of \(demo)")
        XCTAssertTrue(output.contains("shared GET: 200"), output)
        XCTAssertTrue(output.contains("session POST: 200, 20 bytes"), output)
        XCTAssertTrue(output.contains("[exited with status 0]"), output)

        ui.send("q")
        try ui.waitFor("command exited with status 0") { !$0.contains("Output of") }
        ui.send("Q")
        try assertExitStatus(of: ui, is: 0)
    }

    func testAFailedCommandsStatusIsShownAndBecomesNetinspectsOwn() throws {
        let ui = try TmuxSession(name: #function, arguments: ["--", "/bin/sh", "-c", #"printf "one\ntwo\r\033[31mthree\033[0m\n"; exit 4"#],
                                 listens: false, fromAShell: true)
        defer { ui.kill() }
        try ui.waitFor("command exited with status 4")
        ui.send("O")
        let output = try ui.waitFor("[exited with status 4]")
        let lines = output.split(separator: "\n").drop { !$0.hasPrefix("Output of") }.dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(Array(lines.prefix(3)), ["one", "three", "[exited with status 4]"],
                       "a carriage return starts the line again, colours are dropped:\n\(output)")
        ui.send("Q")
        try assertExitStatus(of: ui, is: 4)
    }

    /// netinspect's exit status, as the shell that started it in the pane says.
    private func assertExitStatus(of ui: TmuxSession, is status: Int) throws {
        // The shell's prompt back: keys typed while netinspect restores the
        // terminal would be discarded with its input.
        try ui.waitFor("#") { screen in
            screen.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.hasSuffix("#") == true
        }
        ui.type("echo netinspect-ended-with-$?")
        ui.send("Enter")
        try ui.waitFor("netinspect-ended-with-\(status)")
    }
}
