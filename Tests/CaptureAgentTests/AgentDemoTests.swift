import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Runs the `AgentDemo` executable in a fresh process: the only way to see
/// `URLSession.shared` captured (this test process made sessions long before
/// any agent) and `$NETINSPECT` honoured end to end.
final class AgentDemoTests: XCTestCase {
    func testTheDemoCapturesTheSharedSessionAndItsOwnSession() throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let inspector = try TestInspector(path: temporarySocketPath("demo"))
        defer { inspector.kill() }

        let run = try ExampleProgram(name: "AgentDemo").run(arguments: [server.url("/echo").absoluteString], inspector: inspector)
        let (stdout, stderr) = (run.output, run.errorOutput)

        XCTAssertFalse(run.timedOut, "AgentDemo did not finish")
        XCTAssertEqual(run.status, 0, stdout + stderr)
        XCTAssertTrue(stdout.contains("shared GET: 200"), stdout)
        XCTAssertTrue(stdout.contains("session POST: 200, 20 bytes"), stdout)
        XCTAssertFalse(stderr.contains("not captured"), stderr)
        XCTAssertEqual(server.requests.map(\.method), ["GET", "GET", "POST"])

        guard case .hello(let hello)? = inspector.allMessages.first else { return XCTFail("no hello from the demo") }
        XCTAssertEqual(hello.processID, Int(run.processID))
        // start() waited for its first connection, so nothing was dropped.
        let flows = inspector.flows.values.filter { $0.state == .completed }
        XCTAssertEqual(flows.count, 3, "\(inspector.allMessages)")
        XCTAssertEqual(Set(flows.map(\.sessionID)).count, 2, "URLSession.shared and the demo's own session")
        XCTAssertFalse(inspector.allMessages.contains { if case .status(let s) = $0 { s.droppedEvents > 0 } else { false } })
    }
}

/// docs/AGENT.md shows the demo program verbatim; this keeps them identical.
final class AgentDocumentationTests: XCTestCase {
    func testTheGuideShowsTheDemoSourceVerbatim() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/AGENT.md"), encoding: .utf8)
        let demo = try String(contentsOf: root.appendingPathComponent("Examples/AgentDemo/main.swift"), encoding: .utf8)
        let begin = try XCTUnwrap(guide.range(of: "<!-- AgentDemo:begin -->\n```swift\n"))
        let end = try XCTUnwrap(guide.range(of: "```\n<!-- AgentDemo:end -->"))
        XCTAssertEqual(String(guide[begin.upperBound ..< end.lowerBound]), demo, "docs/AGENT.md and Examples/AgentDemo/main.swift differ")
    }
}

/// The "too late for URLSession.shared" warning, seen from a fresh process:
/// the test bundle runs its own probe test in a child process, where a
/// session exists before the agent starts.
final class SharedSessionWarningTests: XCTestCase {
    private static let probeVariable = "NETINSPECT_SHARED_SESSION_PROBE"

    /// Runs only inside the child process.
    func testProbe() throws {
        guard ProcessInfo.processInfo.environment[Self.probeVariable] != nil else {
            throw XCTSkip("runs only as the child of testStartingAfterASessionExistsWarnsOnceOnStandardError")
        }
        _ = URLSession(configuration: .default)
        for _ in 0 ..< 2 {
            let agent = try CaptureAgent.start(.init(destination: .unix(path: "/tmp/ni-unused.sock")))
            agent.stop()
        }
    }

    func testStartingAfterASessionExistsWarnsOnceOnStandardError() throws {
        let probe = try ProgramRun.collect([CommandLine.arguments[0], "CaptureAgentTests.SharedSessionWarningTests/testProbe"],
                                           adding: [Self.probeVariable: "1"], timeout: 60)
        let stderr = probe.errorOutput
        XCTAssertEqual(probe.status, 0, stderr)
        XCTAssertEqual(stderr.components(separatedBy: "URLSession.shared is not captured").count - 1, 1, stderr)
    }
}
