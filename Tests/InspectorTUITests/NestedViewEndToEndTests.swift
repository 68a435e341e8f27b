import Foundation
import TestSupport
import WireProtocol
import XCTest

/// The nested view through the real binary in tmux: an inbound flow read
/// from a file with its two calls, nested under it, folded with `-`, and
/// on the waterfall of its detail view.
final class NestedViewEndToEndTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    /// `POST /checkout` received (1), which called `GET /inventory/42` (2)
    /// and `POST /payments` (4); `GET /metrics` (3) ran meanwhile on its own.
    private func writeTrace(to path: String) throws {
        let start = Date()
        func flow(_ number: Int, _ method: String, _ path: String, at offset: Double, lasting duration: Double,
                  status: Int = 200, parent: Int? = nil) -> NetworkLog {
            var log = EndToEnd.flow(number, method: method, path: path)
            log.timing = Timing(startedAt: start.addingTimeInterval(offset), requestSent: duration * 0.1,
                                firstResponseByte: duration * 0.8, finished: duration)
            log.response = Response(statusCode: status, headers: [], body: CapturedBody(data: Data("{}".utf8)), mimeType: "application/json")
            log.state = .completed
            log.parentID = parent.map(EndToEnd.id)
            return log
        }
        var inbound = flow(1, "POST", "/checkout", at: 0, lasting: 0.200)
        inbound.direction = .inbound
        let flows = [
            inbound,
            flow(2, "GET", "/inventory/42", at: 0.010, lasting: 0.040, parent: 1),
            flow(3, "GET", "/metrics", at: 0.020, lasting: 0.005),
            flow(4, "POST", "/payments", at: 0.060, lasting: 0.120, status: 502, parent: 1),
        ]
        try flows.reduce(Data()) { $0 + $1.jsonLine() + Data("\n".utf8) }.write(to: URL(fileURLWithPath: path))
    }

    /// The screen's lines holding each text, in order, or nil for a text not shown.
    private func rows(of texts: [String], in screen: String) -> [Int?] {
        let lines = screen.components(separatedBy: "\n")
        return texts.map { text in lines.firstIndex { $0.contains(text) } }
    }

    func testCallsNestUnderTheirInboundFlowFoldAndShowOnItsWaterfall() throws {
        let file = NSTemporaryDirectory() + "netinspect-e2e-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try writeTrace(to: file)
        let ui = try TmuxSession(name: #function, arguments: ["--read", file], listens: false)
        tmux = ui
        var screen = try ui.waitFor("/payments")
        XCTAssertTrue(screen.contains("←POST"), "the received request is marked:\n\(screen)")
        XCTAssertEqual(rows(of: ["/checkout", "/inventory/42", "/metrics", "/payments"], in: screen).compactMap { $0 }.count, 4)
        let flat = rows(of: ["/metrics", "/payments"], in: screen)
        XCTAssertLessThan(flat[0]!, flat[1]!, "flat: time order\n\(screen)")

        ui.send("T")
        screen = try ui.waitFor("└ /payments")
        let nested = rows(of: ["▾ /checkout", "├ /inventory/42", "└ /payments", "/metrics"], in: screen)
        XCTAssertEqual(nested.compactMap { $0 }.count, 4, screen)
        XCTAssertEqual(nested[1]! - nested[0]!, 1, "first call right under its parent:\n\(screen)")
        XCTAssertEqual(nested[2]! - nested[0]!, 2, "second call next:\n\(screen)")
        XCTAssertGreaterThan(nested[3]!, nested[2]!, "the unrelated call after the tree:\n\(screen)")

        ui.send("g")
        ui.send("-")
        screen = try ui.waitFor("▸[+2] /checkout")
        XCTAssertFalse(screen.contains("/inventory/42") || screen.contains("/payments"), "folded:\n\(screen)")
        ui.send("-")
        try ui.waitFor("├ /inventory/42")

        ui.send("Enter")
        try ui.waitFor("made 2 calls while handling it")
        ui.send("3")
        screen = try ui.waitFor("Calls made while handling it: 2")
        XCTAssertTrue(screen.contains("slowest POST /payments 120.0 ms; 1 failed"), screen)
        let waterfall = rows(of: ["←POST /checkout", "├ GET /inventory/42", "└ POST /payments"], in: screen)
        XCTAssertEqual(waterfall.compactMap { $0 }.count, 3, screen)
        XCTAssertTrue(screen.contains("━━━━"), "the parent's time line:\n\(screen)")
    }
}
