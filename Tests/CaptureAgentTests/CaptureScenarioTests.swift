import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Each scenario runs once without and once with the agent: the server must
/// see identical requests, the app identical results, and the log must tell
/// both.
final class CaptureScenarioTests: AgentTestCase, @unchecked Sendable {
    func testGETIsUnchangedAndLogged() async throws {
        let run = try await compare { (URLRequest(url: server.url("/text")), nil) }
        XCTAssertEqual(run.outcome.status, 200)
        XCTAssertEqual(run.outcome.body, Data(TestHTTPServer.textBody))
        assertLog(run)
    }

    func testPOSTWithBodyIsUnchangedAndLogged() async throws {
        let run = try await compare {
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.addValue("one", forHTTPHeaderField: "X-Repeated")
            request.addValue("two", forHTTPHeaderField: "X-Repeated")
            request.httpBody = Data(#"{"hello":"world"}"#.utf8)
            return (request, nil)
        }
        XCTAssertEqual(run.requests.first?.body, Array(#"{"hello":"world"}"#.utf8))
        XCTAssertEqual(run.log?.request.headers.values(for: "X-Repeated"), ["one,two"])
        assertLog(run)
    }
}
