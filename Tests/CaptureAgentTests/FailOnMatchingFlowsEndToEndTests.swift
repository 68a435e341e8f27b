import Foundation
import XCTest

/// `--fail-on FILTER`: a run whose captured traffic matches ends with a
/// non-zero status after listing the flows, even when the program itself
/// did not notice; the program's own failure wins.
final class FailOnMatchingFlowsEndToEndTests: XCTestCase {
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server.shutdown()
    }

    private func netinspect(_ arguments: [String]) throws -> ProgramRun.Finished {
        let binary = try Prerequisite.netinspect()
        let run = try ProgramRun.collect([binary.path] + arguments, timeout: 60)
        XCTAssertFalse(run.timedOut, "netinspect \(arguments) did not end:\n\(run.output)\n\(run.errorOutput)")
        return run
    }

    func testAMatchingFlowMakesTheRunFailAndIsListed() throws {
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        // AgentDemo counts only errors as failures: a 503 leaves it at status 0.
        let run = try netinspect(["--dump", "--fail-on", "~c 5xx", "--", demo, server.url("/status/503").absoluteString])
        XCTAssertEqual(run.status, 3, run.output + run.errorOutput)
        XCTAssertTrue(run.output.contains("shared GET: 503"), run.output)
        let verdict = try XCTUnwrap(run.errorOutput.range(of: "3 flows matched --fail-on '~c 5xx':"), run.errorOutput)
        let listed = run.errorOutput[verdict.upperBound...].split(separator: "\n").filter { $0.contains("/status/503") && $0.contains(" 503 ") }
        XCTAssertEqual(listed.count, 3, run.errorOutput)
    }

    func testNoMatchingFlowLeavesTheProgramsStatus() throws {
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        let run = try netinspect(["--dump", "--fail-on", "~c 5xx", "--fail-on", "~e", "--", demo, server.url("/echo").absoluteString])
        XCTAssertEqual(run.status, 0, run.output + run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("no flow matched --fail-on '~c 5xx', '~e'"), run.errorOutput)
    }

    func testTheProgramsOwnFailureWinsOverAMatch() throws {
        let run = try netinspect(["--dump", "--fail-on", "~c 404", "--", "/bin/sh", "-c", "exit 5"])
        XCTAssertEqual(run.status, 5)
    }

    func testAFileReadHeadlessIsJudgedToo() throws {
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        let saved = NSTemporaryDirectory() + "netinspect-failon-\(getpid()).jsonl"
        defer { unlink(saved) }
        let recorded = try netinspect(["--dump", "--save", saved, "--", demo, server.url("/status/500").absoluteString])
        XCTAssertEqual(recorded.status, 0, recorded.errorOutput)
        let run = try netinspect(["--read", saved, "--json", "--fail-on", "~m POST & ~c 500"])
        XCTAssertEqual(run.status, 3, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("1 flow matched --fail-on '~m POST & ~c 500':"), run.errorOutput)
    }
}
