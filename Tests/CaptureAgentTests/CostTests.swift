import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// What capture costs, measured and printed (the figures in docs/AGENT.md
/// come from here), with bounds loose enough for a busy 2-core machine.
final class CostTests: AgentTestCase, @unchecked Sendable {
    private func time(_ count: Int, _ path: String, captured: Bool, style: ClientStyle = .completionHandler) async -> TimeInterval {
        let delegate = style == .delegate ? RecordingDelegate() : nil
        let session = URLSession(configuration: sessionConfiguration(captured: captured), delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let started = Date()
        for _ in 0 ..< count {
            _ = await performExchange(URLRequest(url: server.url(path)), on: session, style: style)
        }
        return Date().timeIntervalSince(started)
    }

    func testSmallRequestsCostLittleMoreWithTheAgent() async throws {
        _ = await time(5, "/text", captured: true)
        let plain = await time(100, "/text", captured: false)
        let captured = await time(100, "/text", captured: true)
        print(String(format: "cost: 100 small GETs: %.3f s without, %.3f s with the agent (inspector connected)", plain, captured))
        XCTAssertLessThan(captured, plain * 4 + 1)
    }

    func testTenMegabyteResponseCost() async throws {
        let plain = await time(1, "/binary/10485760", captured: false)
        let captured = await time(1, "/binary/10485760", captured: true)
        print(String(format: "cost: 10 MB response: %.2f s without, %.2f s with the agent", plain, captured))
        XCTAssertLessThan(captured, plain * 4 + 2)
    }

    /// One inner session per original session whose tasks are re-sent
    /// (data delegates), and no more once the original sessions are gone.
    func testInnerSessionsDoNotOutliveTheirOriginalSessions() async throws {
        for index in 0 ..< 10 {
            let session = URLSession(configuration: sessionConfiguration(captured: true), delegate: RecordingDelegate(), delegateQueue: nil)
            _ = await performExchange(URLRequest(url: server.url("/text?session=\(index)")), on: session, style: .delegate)
            session.finishTasksAndInvalidate()
        }
        let last = URLSession(configuration: sessionConfiguration(captured: true), delegate: RecordingDelegate(), delegateQueue: nil)
        defer { last.finishTasksAndInvalidate() }
        _ = await performExchange(URLRequest(url: server.url("/text?last")), on: last, style: .delegate)
        XCTAssertEqual(agent.capturePaths.resent, 11)
        print("cost: inner sessions alive after 11 short-lived sessions: \(agent.innerSessionCount)")
        XCTAssertLessThan(agent.innerSessionCount, 11)
    }
}
