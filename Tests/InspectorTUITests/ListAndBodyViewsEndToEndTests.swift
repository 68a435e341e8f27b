import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real binary in tmux: list columns fitted and chosen, the body views
/// (multipart, image), and the mouse selecting and opening flows.
final class ListAndBodyViewsEndToEndTests: XCTestCase {
    func testColumnsFitAndCanBeChosen() throws {
        let ui = try EndToEnd.start(#function)
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "OPTIONS", path: "/preflight", status: 204)
        var screen = try ui.waitFor("/preflight")
        XCTAssertTrue(screen.range(of: "OPTIONS  204 127\\.0\\.0\\.1:8080 +/preflight", options: .regularExpression) != nil,
                      "OPTIONS whole, the host with its port:\n\(screen)")
        ui.send(":")
        ui.type("columns code,method,path")
        ui.send("Enter")
        screen = try ui.waitFor(" Code Method  Path")
        XCTAssertFalse(screen.contains("Host"), screen)
    }

    func testImageMultipartAndHTMLBodyViews() throws {
        let ui = try EndToEnd.start(#function)
        let agent = try WireClient(agentOn: ui.socketPath)
        var upload = EndToEnd.flow(1, method: "POST", path: "/upload")
        upload.request.headers.append(HTTPHeader(name: "Content-Type", value: "multipart/form-data; boundary=B"))
        upload.request.body = CapturedBody(data: Data("--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n--B--\r\n".utf8))
        try agent.send(.flowStarted(upload))
        var finished = EndToEnd.finished(1, status: 200)
        finished.response?.headers = [HTTPHeader(name: "Content-Type", value: "image/png")]
        finished.response?.mimeType = "image/png"
        finished.response?.body = CapturedBody(data: Fixtures.png)
        try agent.send(.flowFinished(finished))
        try ui.waitFor("/upload")
        ui.send("Enter")
        try ui.waitFor("Part 1  title")
        ui.send("Tab")
        let screen = try ui.waitFor("Image  PNG, 320 × 240 px")
        XCTAssertTrue(screen.contains("89 50 4e 47"), screen)
    }

    /// Clicks and the wheel as xterm reports them (X10 encoding, which
    /// tmux-256color's kmous names): tmux passes the bytes to the pane and
    /// ncurses decodes them.
    func testMouseClickSelectsAndOpens() throws {
        let ui = try EndToEnd.start(#function)
        let agent = try WireClient(agentOn: ui.socketPath)
        for number in 1...3 { try agent.sendFlow(number, method: "GET", path: "/row\(number)", status: 200) }
        try ui.waitFor("3/3 flows")
        func press(row: Int, column: Int) -> String {
            "\u{1B}[M" + String(UnicodeScalar(UInt8(32)))
                + String(UnicodeScalar(UInt8(33 + column))) + String(UnicodeScalar(UInt8(33 + row)))
        }
        func release(row: Int, column: Int) -> String {
            "\u{1B}[M" + String(UnicodeScalar(UInt8(35)))
                + String(UnicodeScalar(UInt8(33 + column))) + String(UnicodeScalar(UInt8(33 + row)))
        }
        let wheelUp = "\u{1B}[M" + String(UnicodeScalar(UInt8(32 + 64))) + String(UnicodeScalar(UInt8(53))) + String(UnicodeScalar(UInt8(36)))
        // The wheel moves the selection from the newest flow (row 3) to row 1,
        // so a single click on row 1 opens it (a click elsewhere only selects).
        ui.type(wheelUp)
        try ui.waitFor("no follow")
        ui.type(press(row: 1, column: 20) + release(row: 1, column: 20))
        var screen = try ui.waitFor("X-Request-Id: e2e-1")
        XCTAssertTrue(screen.contains("/row1"), screen)
        ui.send("Escape")
        try ui.waitFor("3/3 flows")
        ui.type(press(row: 2, column: 20) + release(row: 2, column: 20))
        // netinspect reads the pane's input in order: once the help that `?`
        // opens after the click has come and gone, the click has been taken.
        ui.send("?")
        try ui.waitFor("netinspect keys")
        ui.send("Escape")
        screen = try ui.waitFor("3/3 flows", where: { !$0.contains("netinspect keys") })
        XCTAssertFalse(screen.contains("X-Request-Id"), "the first click only selects: \(screen)")
        ui.type(press(row: 2, column: 20) + release(row: 2, column: 20))
        screen = try ui.waitFor("X-Request-Id: e2e-2")
        XCTAssertTrue(screen.contains("/row2"), screen)
    }
}
