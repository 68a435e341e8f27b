import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import CaptureAgent

/// What an app observes of its own tasks, written down line by line, once
/// without and once with the agent: the two transcripts must be identical.
extension AgentTestCase {
    /// Runs `scenario` on a fresh session without and with capture; asserts
    /// identical transcripts, identical requests at the server, and that
    /// the captured tasks took `expectedPath`.
    @discardableResult
    func assertSameBehaviour(
        _ name: String,
        delegate: (@Sendable () -> URLSessionDelegate?)? = nil,
        expectedPath: CapturePath = .inPlace,
        file: StaticString = #filePath,
        line: UInt = #line,
        _ scenario: @escaping (URLSession) async throws -> [String]
    ) async throws -> [String] {
        func run(captured: Bool) async throws -> ([String], [ReceivedRequest]) {
            HTTPCookieStorage.shared.cookies?.forEach(HTTPCookieStorage.shared.deleteCookie)
            let session = URLSession(configuration: sessionConfiguration(captured: captured), delegate: delegate?(), delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            _ = server.takeRequests()
            let lines = try await scenario(session)
            return (lines, server.takeRequestsOnceArrived())
        }
        let (expected, expectedRequests) = try await run(captured: false)
        let before = agent.capturePaths
        let (actual, actualRequests) = try await run(captured: true)
        let after = agent.capturePaths
        for index in 0 ..< max(expected.count, actual.count) {
            let want = index < expected.count ? expected[index] : "<missing>"
            let got = index < actual.count ? actual[index] : "<missing>"
            XCTAssertEqual(got, want, "\(name), line \(index + 1): with the agent / without", file: file, line: line)
        }
        XCTAssertEqual(actualRequests, expectedRequests, "\(name): the server saw something else with the agent", file: file, line: line)
        let inPlace = after.inPlace - before.inPlace
        let resent = after.resent - before.resent
        switch expectedPath {
        case .inPlace:
            XCTAssertGreaterThan(inPlace, 0, "\(name): nothing was captured in place", file: file, line: line)
            XCTAssertEqual(resent, 0, "\(name): the agent re-sent a task it should have run in place", file: file, line: line)
        case .resent:
            XCTAssertGreaterThan(resent, 0, "\(name): expected the re-sending path", file: file, line: line)
        case .duplicate:
            XCTFail("not a path a scenario asks for", file: file, line: line)
        }
        return actual
    }

    static func describe(_ response: URLResponse?) -> String {
        guard let http = response as? HTTPURLResponse else { return "response: \(response.map { "\(type(of: $0))" } ?? "nil")" }
        let headers = http.allHeaderFields.compactMap { key, value in (key as? String).map { "\($0)=\(value)" } }.sorted()
        return "response: \(http.statusCode) \(http.url?.absoluteString ?? "-") \(headers.joined(separator: ", ")) expected=\(http.expectedContentLength)"
    }

    static func describe(_ error: Error?) -> String {
        guard let error = error as NSError? else { return "error: nil" }
        return "error: \(error.domain) \(error.code)"
    }

    static func describeFile(_ url: URL?) -> String {
        guard let url else { return "file: nil" }
        guard let data = FileManager.default.contents(atPath: url.path) else { return "file: unreadable" }
        return "file: \(data.count) bytes, pattern \(data == Data(TestHTTPServer.pattern(count: data.count)) ? "ok" : "WRONG")"
    }

    /// corelibs marks a task completed just after calling its handler or
    /// delegate, on another thread: wait for it rather than race it.
    static func settledState(_ task: URLSessionTask) -> String {
        "completed: \(eventually(timeout: 5) { task.state == .completed })"
    }

    static func counters(_ task: URLSessionTask) -> String {
        "counters: received=\(task.countOfBytesReceived) expectedToReceive=\(task.countOfBytesExpectedToReceive) "
            + "sent=\(task.countOfBytesSent) expectedToSend=\(task.countOfBytesExpectedToSend)"
    }

    static func progress(_ task: URLSessionTask) -> String {
        "progress: \(task.progress.completedUnitCount)/\(task.progress.totalUnitCount)"
    }
}
