import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real binary in tmux: the `:` command bar (run, complete, history,
/// help) and copying a flow as Swift or HTTPie through tmux's clipboard.
final class CommandBarAndCopyEndToEndTests: XCTestCase {
    func testCommandBarRunsCompletesAndRemembers() throws {
        let ui = try EndToEnd.start(#function)
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: "/fine", status: 200)
        try agent.sendFlow(2, method: "POST", path: "/broken", status: 503)
        try ui.waitFor("2/2 flows")
        ui.send(":")
        ui.type("filter ~c 5xx")
        ui.send("Enter")
        var screen = try ui.waitFor("1/2 flows")
        XCTAssertFalse(screen.contains("/fine"), screen)
        ui.send(":")
        ui.type("so")
        ui.send("Tab")
        ui.type(" dur")
        ui.send("Tab")
        try ui.waitFor(":sort duration")
        ui.send("Enter")
        try ui.waitFor("sort: duration")
        ui.send(":")
        ui.send("Up")
        ui.send("Up")
        try ui.waitFor(":filter ~c 5xx")
        ui.send("Escape")
        ui.send(":")
        ui.type("nonsense")
        ui.send("Enter")
        try ui.waitFor("Unknown command \"nonsense\"")
        ui.send("?")
        // tmux can be read between the help's title and its rows being drawn: wait for both.
        screen = try ui.waitFor("netinspect keys") { $0.contains(":mark") || $0.contains(":filter") }
        XCTAssertTrue(screen.contains(":mark") || screen.contains(":filter"), "help lists the bar names beside the keys:\n\(screen)")
        ui.send("Escape")
        ui.send(":")
        ui.type("quit")
        ui.send("Enter")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }

    func testCopyAsSwiftAndHTTPieReachTheClipboard() throws {
        let ui = try EndToEnd.start(#function)
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "DELETE", path: "/items/9", status: 204)
        try ui.waitFor("/items/9")
        ui.send("S")
        var screen = try ui.waitFor("Swift code, sent to the clipboard")
        XCTAssertTrue(screen.contains("request.httpMethod = \"DELETE\""), screen)
        eventually { ui.clipboard().contains("URLRequest(url:") }
        XCTAssertTrue(ui.clipboard().contains("forHTTPHeaderField: \"X-Request-Id\""), ui.clipboard())
        ui.send("q")
        ui.send("H")
        screen = try ui.waitFor("HTTPie command")
        XCTAssertTrue(screen.contains("http --ignore-stdin 'DELETE' 'http://127.0.0.1:8080/items/9'"), screen)
    }
}
