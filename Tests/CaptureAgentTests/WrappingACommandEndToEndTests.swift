#if canImport(Glibc)
import Glibc
#endif
import Foundation
import WireProtocol
import XCTest

/// `netinspect [--dump|--json] -- PROGRAM`: the real binary runs a real
/// captured program (URLSession's AgentDemo, AsyncHTTPClient's
/// ServerClientDemo) on a private socket, prints every flow it made, and
/// ends with it, with its exit status.
final class WrappingACommandEndToEndTests: XCTestCase {
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server.shutdown()
    }

    /// Runs `netinspect ARGUMENTS` to its end (a minute bounds a hang).
    private func netinspect(_ arguments: [String]) throws -> ProgramRun.Finished {
        let binary = try Prerequisite.netinspect()
        // NETINSPECT of the test's own environment must not leak through: the command gets netinspect's socket.
        let run = try ProgramRun.collect([binary.path] + arguments, adding: ["NETINSPECT": "unix:/nonexistent/wrong.sock"], timeout: 60)
        XCTAssertFalse(run.timedOut, "netinspect \(arguments) did not end:\n\(run.output)\n\(run.errorOutput)")
        return run
    }

    /// The lines netinspect printed for flows (they name the server), apart from the program's own.
    private func flowLines(_ output: String) -> [Substring] {
        output.split(separator: "\n").filter { $0.contains(server.url("/").absoluteString.dropLast()) }
    }

    func testDumpShowsEveryFlowOfAURLSessionProgramAndExitsWithItsStatusZero() throws {
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        let run = try netinspect(["--dump", "--", demo, server.url("/echo").absoluteString])
        XCTAssertEqual(run.status, 0, run.output + run.errorOutput)
        XCTAssertTrue(run.output.contains("shared GET: 200"), "the program's own output passes through:\n\(run.output)")
        let lines = flowLines(run.output)
        XCTAssertEqual(lines.count, 3, run.output)
        XCTAssertEqual(lines.filter { $0.contains(" GET ") && $0.contains(" 200 ") }.count, 2, run.output)
        XCTAssertEqual(lines.filter { $0.contains(" POST ") && $0.contains(" 200 ") }.count, 1, run.output)
        XCTAssertTrue(run.errorOutput.contains("AgentDemo"), "connection news on stderr:\n\(run.errorOutput)")
    }

    func testDumpEndsWithTheStatusOfAProgramThatFailed() throws {
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        // Nothing listens there: every request fails, and AgentDemo exits 1.
        let closed = try closedPortURL()
        let run = try netinspect(["--dump", "--", demo, closed])
        XCTAssertEqual(run.status, 1, run.output + run.errorOutput)
        let lines = run.output.split(separator: "\n").filter { $0.contains(closed) }
        XCTAssertEqual(lines.count, 3, "each failed flow is shown:\n\(run.output)")
    }

    #if AsyncHTTPClient && OpenAPI
    func testJSONShowsEveryFlowOfAnAsyncHTTPClientProgram() throws {
        let demo = try ExampleProgram(name: "ServerClientDemo").executable().path
        let run = try netinspect(["--json", "--", demo, server.url("/text").absoluteString])
        XCTAssertEqual(run.status, 0, run.output + run.errorOutput)
        let flows = try run.output.split(separator: "\n").filter { $0.hasPrefix("{") }.map { try NetworkLog(jsonLine: Array($0.utf8)) }
        XCTAssertEqual(flows.map(\.source?.client), [.asyncHTTPClient, .asyncHTTPClient, .openAPI], run.output)
        XCTAssertEqual(flows.map(\.response?.statusCode), [200, 200, 200])
        XCTAssertTrue(run.output.contains("ServerClientDemo:"), "the program's own output passes through:\n\(run.output)")
    }
    #endif

    func testADeathBySignalEndsWithOneHundredTwentyEightPlusItsNumber() throws {
        let run = try netinspect(["--dump", "--", "/bin/sh", "-c", "kill -TERM $$"])
        XCTAssertEqual(run.status, 128 + SIGTERM, run.errorOutput)
    }

    func testACommandThatCannotStartEndsWithOneHundredTwentySeven() throws {
        let run = try netinspect(["--dump", "--", "/nonexistent/program"])
        XCTAssertEqual(run.status, 127)
        XCTAssertTrue(run.errorOutput.contains("cannot run /nonexistent/program"), run.errorOutput)
    }

    func testTheCommandGetsTheSocketNetinspectListensOnAndControlOnlyWhenRulesAskForIt() throws {
        let printing = ["/bin/sh", "-c", "echo \"[$NETINSPECT] [${NETINSPECT_CONTROL-unset}]\""]
        let plain = try netinspect(["--dump", "--"] + printing)
        XCTAssertEqual(plain.status, 0, plain.errorOutput)
        let socket = try XCTUnwrap(plain.output.firstMatch(of: /\[unix:(\/[^\]]+)\] \[unset\]/), plain.output).1
        XCTAssertTrue(plain.errorOutput.contains("listening on unix:\(socket)"), plain.errorOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: String(socket)), "the socket is removed at the end")
        XCTAssertFalse(FileManager.default.fileExists(atPath: (String(socket) as NSString).deletingLastPathComponent),
                       "so is its private directory")

        let ruled = try netinspect(["--dump", "--map-remote", "|example.invalid|127.0.0.1:1", "--"] + printing)
        XCTAssertTrue(ruled.output.contains("] [1]"), ruled.output)
    }

    /// A URL on a loopback port nothing listens on (bound, then closed).
    private func closedPortURL() throws -> String {
        "http://127.0.0.1:\(try RealPeer.freePort())/closed"
    }
}
