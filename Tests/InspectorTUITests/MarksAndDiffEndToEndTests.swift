import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real binary in tmux: marks and comments kept in `--save` and HAR and
/// read back, and the diff of two flows read from a file.
final class MarksAndDiffEndToEndTests: XCTestCase {
    func testMarksAndCommentsAreSavedAndReadBack() throws {
        let save = EndToEnd.temporaryPath(".jsonl")
        let har = EndToEnd.temporaryPath(".har")
        defer { for path in [save, har] { try? FileManager.default.removeItem(atPath: path) } }
        let ui = try EndToEnd.start(#function, arguments: ["--save", save, "--har", har])
        let agent = try WireClient(agentOn: ui.socketPath)
        try agent.sendFlow(1, method: "GET", path: "/one", status: 200)
        try agent.sendFlow(2, method: "GET", path: "/two", status: 500)
        try ui.waitFor("2/2 flows")
        ui.send("g")
        ui.send("m")
        ui.send("#")
        try ui.waitFor("Comment:")
        ui.type("works")
        ui.send("Enter")
        var screen = try ui.waitFor("# works")
        XCTAssertTrue(screen.contains("●"), screen)
        ui.send("M")
        screen = try ui.waitFor("1/2 flows")
        XCTAssertTrue(screen.contains("filter: ~marked") && !screen.contains("/two"), screen)
        ui.send("Q")
        XCTAssertTrue(try ui.waitForExit().isClean)
        ui.kill()

        let saved = try FlowFile.readContents(path: save)
        XCTAssertEqual(saved.annotations[EndToEnd.id(1)], FlowAnnotation(isMarked: true, comment: "works"))
        let exported = try FlowFile.readContents(path: har)
        XCTAssertEqual(exported.annotations[EndToEnd.id(1)], FlowAnnotation(isMarked: true, comment: "works"))

        let reader = try EndToEnd.start("\(#function)-read", arguments: ["--read", save], listens: false)
        screen = try reader.waitFor("/two")
        XCTAssertTrue(screen.contains("# works") && screen.contains("●"), "marks and comments read back from --save:\n\(screen)")
        reader.send("]")
        reader.send("Enter")
        screen = try reader.waitFor("Comment: works")
        XCTAssertTrue(screen.contains("● marked"), screen)
    }

    func testDiffOfTwoFlowsFromAFile() throws {
        let file = EndToEnd.temporaryPath(".jsonl")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var good = EndToEnd.flow(1, method: "POST", path: "/orders?x=1")
        good.apply(EndToEnd.finished(1, status: 200))
        var bad = EndToEnd.flow(2, method: "POST", path: "/orders?x=2")
        var finished = EndToEnd.finished(2, status: 422)
        finished.response?.body = CapturedBody(data: Data(#"{"status":422,"retry":false,"reason":"token"}"#.utf8))
        bad.apply(finished)
        try (good.jsonLine() + Data("\n".utf8) + bad.jsonLine() + Data("\n".utf8)).write(to: URL(fileURLWithPath: file))
        let ui = try EndToEnd.start(#function, arguments: ["--read", file], listens: false)
        try ui.waitFor("/orders?x=2")
        ui.send("g")
        ui.send("=")
        try ui.waitFor("Diff base")
        ui.send("j")
        ui.send("+")
        let screen = try ui.waitFor("Response body (JSON, by path)")
        XCTAssertTrue(screen.contains("?x") && screen.contains("~ status") && screen.contains("422"), screen)
        XCTAssertTrue(screen.contains("$.retry") && screen.contains("+ $.reason"), screen)
        ui.send("q")
        try ui.waitFor("2/2 flows")
    }
}
