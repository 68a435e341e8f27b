import Foundation
@testable import InspectorCore
import TestSupport
import XCTest

/// README's "Try it" paragraph, followed literally with the real binary in
/// tmux: `netinspect --demo`, `?`, `Enter`, `Tab` through the tabs, `f`,
/// then the breakpoint walk-through at the demo's own pace (`i`, `~m POST`,
/// `Enter`: "the next POST waits with HELD, the list stopping on it";
/// `Enter` shows it, `a` resumes it and `a` again its response, `h` and `X`
/// kill the next, `I` switches breakpoints off, `r` sends a flow again) and `Q`.
final class ReadmeWalkthroughEndToEndTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    func testTheTryItParagraphWorksAsWritten() throws {
        let ui = try TmuxSession(name: #function, arguments: ["--demo"], listens: false)
        tmux = ui
        try ui.waitFor(" 200 ", timeout: 20)

        // "Press ? for the keys"
        ui.send("?")
        try ui.waitFor("netinspect keys")
        ui.send("Escape")
        try ui.waitFor(" 200 ", where: { !$0.contains("netinspect keys") })

        // "Enter on a flow, Tab through Request, Response and Timing": the
        // first, which has finished (the newest may still be running or failed).
        ui.send("g")
        ui.send("Enter")
        try ui.waitFor("flow id ")
        ui.send("Tab")
        try ui.waitFor("HTTP 200 OK", where: { $0.contains("Body ") })
        ui.send("Tab")
        try ui.waitFor("Waterfall")
        ui.send("q")

        // "f to filter"
        ui.send("f")
        ui.type("~c 404")
        ui.send("Enter")
        try ui.waitFor("filter: ~c 404")
        ui.send("c")
        try ui.waitFor(" 200 ", where: { !$0.contains("filter: ~c 404") })

        // "press i, type ~m POST and Enter, and the next POST waits with HELD,
        // the list stopping on it (Enter shows it …"
        ui.send("i")
        ui.type("~m POST")
        ui.send("Enter")
        try ui.waitFor("intercept: ~m POST")
        try ui.waitFor("is held: enter shows it", timeout: 30)
        ui.send("Enter")
        let held = try ui.waitFor("HELD at a breakpoint")
        XCTAssertTrue(held.contains("POST "), "Enter opened the held POST, not a flow that came after it:\n\(held)")

        // "… a resumes it (its response is held next, a again)"
        XCTAssertTrue(held.contains("before its request is sent"), held)
        ui.send("a")
        try ui.waitFor("HELD at a breakpoint before the app sees its response", timeout: 15)
        ui.send("a")
        let resumed = try ui.waitFor("Resumed POST", timeout: 15, where: { !$0.contains("HELD at a breakpoint") })
        let status = resumed.split(separator: "\n").first?.split(separator: " ").last.flatMap { Int($0) }
        XCTAssertTrue((200..<300).contains(status ?? 0), "the POST (an order or a login) went through:\n\(resumed)")
        ui.send("q")

        // "X kills it": the next POST, reached with h.
        try ui.waitFor("HELD 1", timeout: 30)
        ui.send("h", "X")
        try ui.waitFor("CXL", timeout: 15)

        // "I switches breakpoints off"
        ui.send("I")
        try ui.waitFor(" 200 ", where: { !$0.contains("intercept: ~m POST") })

        // "r on any flow sends it again"
        ui.send("g", "r")
        try ui.waitFor("Asked demo-shop to replay ", timeout: 15)

        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
    }
}
