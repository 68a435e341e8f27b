import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import CaptureAgent

/// Cancelling a task, invalidating its session or stopping the agent at the
/// moment tasks complete must not crash the app. Before the capture protocol
/// called its client on the task's work queue, these trapped inside
/// FoundationNetworking ("a task that is not in the registry", a null
/// session, "Session invalidated") in about 1 run in 10 with the agent and
/// never without it.
///
/// Not tested here: async/await calls whose Swift task is cancelled as they
/// complete deadlock in corelibs 6.3.1 with or without the agent (3 of 6
/// runs of 300 each way; `URLSessionTask.cancel()` waits synchronously on
/// the work queue; swift-corelibs-foundation #5412, fixed after 6.3.1).
final class CancellationRaceTests: AgentTestCase, @unchecked Sendable {
    private func hammer(captured: Bool, rounds: Int) {
        let session = URLSession(configuration: sessionConfiguration(captured: captured, timeout: 10))
        defer { session.invalidateAndCancel() }
        let group = DispatchGroup()
        for round in 0..<rounds {
            group.enter()
            let task = session.dataTask(with: server.url("/slow/\(round % 3)")) { _, _, _ in group.leave() }
            task.resume()
            // Cancel around the moment the response completes: 0 to 4 ms.
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds((round * 397) % 4000)) { task.cancel() }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "every task must complete, cancelled or not")
    }

    private func invalidateWhileBusy(captured: Bool, rounds: Int) {
        for round in 0..<rounds {
            let session = URLSession(configuration: sessionConfiguration(captured: captured, timeout: 10))
            for index in 0..<8 { session.dataTask(with: server.url("/slow/\(index % 3)")).resume() }
            usleep(useconds_t((round * 131) % 3000))
            session.invalidateAndCancel()
        }
    }

    func testInvalidatingBusySessionsWithoutTheAgent() {
        invalidateWhileBusy(captured: false, rounds: 60)
        usleep(200_000)
    }

    func testInvalidatingBusySessionsWithTheAgent() {
        invalidateWhileBusy(captured: true, rounds: 60)
        usleep(200_000)
    }

    func testStoppingTheAgentWhileTasksAreCancelled() {
        let session = URLSession(configuration: sessionConfiguration(captured: true, timeout: 10))
        let group = DispatchGroup()
        var tasks: [URLSessionDataTask] = []
        for round in 0..<40 {
            group.enter()
            let task = session.dataTask(with: server.url("/slow/\(round % 4)")) { _, _, _ in group.leave() }
            tasks.append(task)
            task.resume()
        }
        usleep(1_500)
        let started = tasks
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            if lane == 0 { agent.stop() } else { started.forEach { $0.cancel() } }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success, "every task must complete")
        session.invalidateAndCancel()
    }

    func testCancellingAsTasksCompleteWithoutTheAgent() {
        hammer(captured: false, rounds: 300)
    }

    func testCancellingAsTasksCompleteWithTheAgent() {
        hammer(captured: true, rounds: 300)
    }
}
