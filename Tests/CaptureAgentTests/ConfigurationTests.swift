import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Redaction and include/exclude patterns, end to end.
final class RedactionAndFilterTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.redactedHeaders.insert("x-api-key")
        configuration.redactedQueryItems = ["token"]
        configuration.excludedURLs = ["*/status/418*"]
    }

    func testRedactedValuesReachTheServerButNotTheLog() async throws {
        let run = try await compare(logSuffix: "page=2") {
            var request = URLRequest(url: server.url("/echo?token=s3cret&page=2"))
            request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
            request.setValue("k-123", forHTTPHeaderField: "X-API-Key")
            return (request, nil)
        }
        // Foundation capitalises field names on the way out (X-API-Key → X-Api-Key).
        let sent = (run.requests.first?.headers ?? []).map { "\($0.name.lowercased()): \($0.value)" }
        XCTAssertTrue(sent.contains("authorization: Bearer abc"), "\(sent)")
        XCTAssertTrue(sent.contains("x-api-key: k-123"), "\(sent)")
        XCTAssertEqual(run.requests.first?.uri, "/echo?token=s3cret&page=2")

        let log = try XCTUnwrap(run.log)
        XCTAssertEqual(log.request.url, server.url("/echo?token=%3Credacted%3E&page=2").absoluteString)
        XCTAssertEqual(log.request.headers.values(for: "Authorization"), ["<redacted>"])
        XCTAssertEqual(log.request.headers.values(for: "X-API-Key"), ["<redacted>"])
        XCTAssertFalse(inspector.allMessages.contains { "\($0)".contains("s3cret") || "\($0)".contains("k-123") })
    }

    func testExcludedURLsAreNotCapturedAndStillWork() async throws {
        let session = URLSession(configuration: sessionConfiguration(captured: true))
        defer { session.finishTasksAndInvalidate() }
        let excluded = await performExchange(URLRequest(url: server.url("/status/418")), on: session, style: .completionHandler)
        let included = await performExchange(URLRequest(url: server.url("/text")), on: session, style: .completionHandler)
        XCTAssertEqual(excluded.status, 418)
        XCTAssertEqual(included.status, 200)
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "/text").count == 1 })
        XCTAssertTrue(inspector.finishedFlows(urlSuffix: "/status/418").isEmpty)
    }
}

/// The configuration's pure parts.
final class ConfigurationTests: XCTestCase {
    func testDestinationComesFromTheConfigurationThenTheEnvironmentThenTheDefault() throws {
        let explicit = CaptureAgent.Configuration(destination: .tcp(host: "127.0.0.1", port: 9))
        XCTAssertEqual(try explicit.resolvedDestination(environment: ["NETINSPECT": "unix:/tmp/other.sock"]), .tcp(host: "127.0.0.1", port: 9))
        let none = CaptureAgent.Configuration()
        XCTAssertEqual(try none.resolvedDestination(environment: ["NETINSPECT": "tcp:127.0.0.1:9123"]), .tcp(host: "127.0.0.1", port: 9123))
        XCTAssertEqual(try none.resolvedDestination(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]), .unix(path: "/run/user/7/netinspect.sock"))
    }

    func testAMalformedEnvironmentDestinationFailsStartWithAReadableError() {
        XCTAssertThrowsError(try CaptureAgent.start(CaptureAgent.Configuration(), clock: .system, environment: ["NETINSPECT": "udp:x"])) { error in
            guard case .invalidDestination(let reason)? = error as? CaptureAgent.StartError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("udp:x"), reason)
        }
    }

    func testPatternsMatchHostsAndURLsWithWildcards() {
        var configuration = CaptureAgent.Configuration()
        XCTAssertTrue(configuration.shouldCapture(URL(string: "http://a.example.com/x")!))
        configuration.includedHosts = ["*.example.com"]
        XCTAssertTrue(configuration.shouldCapture(URL(string: "http://API.Example.com/x")!))
        XCTAssertFalse(configuration.shouldCapture(URL(string: "http://example.org/x")!))
        configuration.excludedURLs = ["http://*/health*"]
        XCTAssertFalse(configuration.shouldCapture(URL(string: "http://a.example.com/healthz")!))
        XCTAssertTrue(Glob.matches("a*b*c", "aXXbYc"))
        XCTAssertFalse(Glob.matches("a*b*c", "aXXbY"))
    }

    func testQueryRedactionKeepsOtherItemsAndTheirEncoding() {
        var configuration = CaptureAgent.Configuration()
        configuration.redactedQueryItems = ["key"]
        XCTAssertEqual(configuration.redacting(URL(string: "http://h/p?a=%20x&key=v&key=w#f")!), "http://h/p?a=%20x&key=%3Credacted%3E&key=%3Credacted%3E#f")
        XCTAssertEqual(configuration.redacting(URL(string: "http://h/p?a=1")!), "http://h/p?a=1")
    }

    func testCaptureInsertsTheProtocolFirstExactlyOnce() throws {
        let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .unix(path: "/tmp/ni-unused.sock")))
        defer { agent.stop() }
        let configuration = URLSessionConfiguration.default
        agent.capture(configuration)
        agent.capture(configuration)
        let classes = try XCTUnwrap(configuration.protocolClasses).map { ObjectIdentifier($0) }
        XCTAssertEqual(classes.first, ObjectIdentifier(CaptureURLProtocol.self))
        XCTAssertEqual(classes.filter { $0 == ObjectIdentifier(CaptureURLProtocol.self) }.count, 1)
        XCTAssertEqual(classes.count, (URLSessionConfiguration.default.protocolClasses?.count ?? 0) + 1)
    }
}
