import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import TestSupport
@testable import CaptureAgent

/// Cancelling a task, invalidating its session or stopping the agent at the
/// moment tasks complete must not crash the app, and every task must still
/// end as it would without the agent: answered, or cancelled. Before the
/// capture protocol called its client on the task's work queue, these
/// trapped inside FoundationNetworking ("a task that is not in the
/// registry", a null session, "Session invalidated") in about 1 run in 10
/// with the agent and never without it.
///
/// Not tested here: async/await calls whose Swift task is cancelled as they
/// complete deadlock in corelibs 6.3.1 with or without the agent (3 of 6
/// runs of 300 each way; `URLSessionTask.cancel()` waits synchronously on
/// the work queue; swift-corelibs-foundation #5412, fixed after 6.3.1).
final class CancellationRaceTests: AgentTestCase, @unchecked Sendable {
    /// How each task of a round ended, as its completion handler said.
    private final class Endings: @unchecked Sendable {
        let group = DispatchGroup()
        private let ended = Locked<[String]>([])

        /// A completion handler that counts the task's ending.
        func handler() -> @Sendable (Data?, URLResponse?, Error?) -> Void {
            group.enter()
            return { [ended, group] _, response, error in
                let status = (response as? HTTPURLResponse)?.statusCode
                ended.withLock { $0.append(Self.describe(status: status, error: error)) }
                group.leave()
            }
        }

        /// "200", "cancelled", or what else happened, which no task may see.
        private static func describe(status: Int?, error: Error?) -> String {
            if let error = error as? URLError { return error.code == .cancelled ? "cancelled" : "error \(error.code.rawValue)" }
            if let error { return "error \(error)" }
            return status.map(String.init) ?? "no response"
        }

        /// Waits for every handler, then asserts each task was answered or cancelled.
        func assertEveryTaskEnded(within seconds: Int, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(group.wait(timeout: .now() + .seconds(seconds)), .success, "every task must complete, cancelled or not",
                           file: file, line: line)
            let unexpected = ended.current.filter { $0 != "200" && $0 != "cancelled" }
            XCTAssertEqual(unexpected, [], "a task must be answered or cancelled, nothing else", file: file, line: line)
        }
    }

    /// Says when a session has become invalid: its last event, after every
    /// task's, so a late callback that traps does so inside the test.
    private final class Invalidation: NSObject, URLSessionDelegate, @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) { done.signal() }
    }

    private func hammer(captured: Bool, rounds: Int) {
        let session = URLSession(configuration: sessionConfiguration(captured: captured, timeout: 10))
        defer { session.invalidateAndCancel() }
        let endings = Endings()
        for round in 0..<rounds {
            let task = session.dataTask(with: server.url("/slow/\(round % 3)"), completionHandler: endings.handler())
            task.resume()
            // Cancel around the moment the response completes: 0 to 4 ms.
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds((round * 397) % 4000)) { task.cancel() }
        }
        endings.assertEveryTaskEnded(within: 60)
    }

    private func invalidateWhileBusy(captured: Bool, rounds: Int) {
        for round in 0..<rounds {
            let invalidation = Invalidation()
            let session = URLSession(configuration: sessionConfiguration(captured: captured, timeout: 10),
                                     delegate: invalidation, delegateQueue: nil)
            let endings = Endings()
            for index in 0..<8 {
                session.dataTask(with: server.url("/slow/\(index % 3)"), completionHandler: endings.handler()).resume()
            }
            // Not a wait for a condition: 0 to 3 ms spreads the invalidation
            // over the tasks' lives (before the request, on the wire, as the
            // response completes), which is the race under test.
            paceThread(.microseconds((round * 131) % 3000))
            session.invalidateAndCancel()
            endings.assertEveryTaskEnded(within: 30)
            XCTAssertEqual(invalidation.done.wait(timeout: .now() + 10), .success, "round \(round): the session never became invalid")
        }
    }

    func testInvalidatingBusySessionsWithoutTheAgent() {
        invalidateWhileBusy(captured: false, rounds: 60)
    }

    func testInvalidatingBusySessionsWithTheAgent() {
        invalidateWhileBusy(captured: true, rounds: 60)
    }

    func testStoppingTheAgentWhileTasksAreCancelled() {
        let session = URLSession(configuration: sessionConfiguration(captured: true, timeout: 10))
        defer { session.invalidateAndCancel() }
        let endings = Endings()
        var tasks: [URLSessionDataTask] = []
        for round in 0..<40 {
            let task = session.dataTask(with: server.url("/slow/\(round % 4)"), completionHandler: endings.handler())
            tasks.append(task)
            task.resume()
        }
        // The race wants tasks on the wire when the agent stops: the first
        // request reaching the server says they are.
        XCTAssertTrue(eventually { !server.requests.isEmpty }, "no task reached the server")
        let started = tasks
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            if lane == 0 { agent.stop() } else { started.forEach { $0.cancel() } }
        }
        endings.assertEveryTaskEnded(within: 30)
    }

    func testCancellingAsTasksCompleteWithoutTheAgent() {
        hammer(captured: false, rounds: 300)
    }

    func testCancellingAsTasksCompleteWithTheAgent() {
        hammer(captured: true, rounds: 300)
    }
}
