import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// The insights view of the real netinspect in tmux: `s` draws the table
/// of a file's flows with its figures, `tab` groups by host, `o` sorts,
/// `Enter` filters the list to the selected group; `--summary` prints the
/// same table at the end of a headless run.
final class InsightsViewEndToEndTests: XCTestCase {
    private var file: String!

    override func setUpWithError() throws {
        file = NSTemporaryDirectory() + "netinspect-insights-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jsonl"
        try FlowLineWriter.writeSession(FlowFile.Contents(flows: Fixtures.insightsFlows()), to: file)
    }

    override func tearDown() {
        unlink(file)
    }

    func testTheInsightsViewDrawsTheFiguresAndEnterFiltersTheList() throws {
        let ui = try TmuxSession(name: #function, arguments: ["--read", file], listens: false, width: 140)
        defer { ui.kill() }
        try ui.waitFor("14/14 flows")
        ui.send("s")
        let table = try ui.waitFor("Insights by [route]")
        let users = try XCTUnwrap(table.split(separator: "\n").first { $0.contains("GET api.example.com/users/{id}") }, table)
        XCTAssertEqual(users.split(separator: " ").dropFirst(2).prefix(11).joined(separator: " "),
                       "10 10.0 50ms 100ms 100ms 0 B 50 B 550ms ▃█▂", table)
        // Sorted by impact: the failed ping (60 s) first.
        let rows = table.split(separator: "\n").filter { $0.hasPrefix("GET ") || $0.hasPrefix("POST ") }
        XCTAssertEqual(rows.first?.hasPrefix("GET other.example.org/v1/deadbeef/ping"), true, table)

        ui.send("Tab")
        let hosts = try ui.waitFor("Insights by route [host]")
        XCTAssertTrue(hosts.contains("api.example.com") && hosts.contains("other.example.org"), hosts)
        ui.send("Tab", "Tab", "o")
        try ui.waitFor("sort: count↓")
        // Most flows first: the ten users; Enter shows just those.
        ui.send("Enter")
        let list = try ui.waitFor("10/14 flows")
        XCTAssertTrue(list.contains("filter: ~m"), list)
        XCTAssertFalse(list.contains("avatar"), list)
        ui.send("Q")
    }

    func testSummaryPrintsTheTableAtTheEndOfAHeadlessRun() throws {
        let run = try ProgramRun.collect([NetinspectBinary.url.path, "--read", file, "--dump", "--summary"], timeout: 60)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("netinspect: insights of 14 flows"), run.errorOutput)
        let users = run.errorOutput.split(separator: "\n").first { $0.hasPrefix("GET api.example.com/users/{id}") }
        XCTAssertEqual(users?.split(separator: " ").dropFirst(2).prefix(11).joined(separator: " "),
                       "10 10.0 50ms 100ms 100ms 0 B 50 B 550ms ▃█▂", run.errorOutput)
        XCTAssertEqual(run.output.split(separator: "\n").count, 14, "the flows still go to standard output")
    }

    func testSummaryWithAFilterSummarisesTheFlowsItShowsAndSaysSo() throws {
        let run = try ProgramRun.collect([NetinspectBinary.url.path, "--read", file, "--dump", "--summary", "--filter", "~u /users/"], timeout: 60)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        let shown = run.output.split(separator: "\n").count
        XCTAssertTrue(run.errorOutput.contains("netinspect: insights of \(shown) flows, those --filter '~u /users/' shows"), run.errorOutput)
        let routes = run.errorOutput.split(separator: "\n").filter { $0.hasPrefix("GET ") || $0.hasPrefix("POST ") }
        XCTAssertFalse(routes.contains { $0.contains("ping") || $0.contains("blobs") }, "only the routes of flows the filter shows:\n\(run.errorOutput)")
    }
}
