import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A loopback server, an inspector and a running agent connected to it,
/// fresh for every test; and the with/without-agent comparison.
class AgentTestCase: XCTestCase, @unchecked Sendable {
    var server: TestHTTPServer!
    var inspector: TestInspector!
    var agent: CaptureAgent!

    /// Adjusts the agent's configuration before each test.
    func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {}

    override func setUpWithError() throws {
        server = try TestHTTPServer()
        let path = temporarySocketPath("\(type(of: self))-\(name.split(separator: " ").last ?? "")".filter { $0.isLetter || $0.isNumber || $0 == "-" })
        inspector = try TestInspector(path: String(path.prefix(100)))
        var configuration = CaptureAgent.Configuration(destination: .unix(path: inspector.path))
        agentConfiguration(&configuration)
        agent = try CaptureAgent.start(configuration)
        XCTAssertTrue(eventually { agent.isConnected }, "agent never connected to the test inspector")
    }

    override func tearDown() {
        agent?.stop()
        inspector?.kill()
        server?.shutdown()
    }

    /// A configuration with a short request timeout, captured or not.
    func sessionConfiguration(captured: Bool, timeout: TimeInterval = 30) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        if captured { agent.capture(configuration) }
        return configuration
    }

    struct Comparison {
        var outcome: AppOutcome
        var requests: [ReceivedRequest]
        var log: NetworkLog?
    }

    /// Runs the exchange once without and once with the agent and asserts the
    /// server saw identical requests and the app identical results. Returns
    /// the captured run and its log (the finished flow for `logSuffix`).
    @discardableResult
    func compare(
        style: ClientStyle = .completionHandler,
        timeout: TimeInterval = 30,
        refuseRedirects: Bool = false,
        credential: URLCredential? = nil,
        logSuffix: String? = nil,
        file: StaticString = #filePath,
        line: UInt = #line,
        _ make: () throws -> (URLRequest, UploadSource?)
    ) async throws -> Comparison {
        func run(captured: Bool) async throws -> (AppOutcome, [ReceivedRequest]) {
            let delegate = style == .delegate || credential != nil ? RecordingDelegate(refusesRedirects: refuseRedirects, credential: credential) : nil
            let session = URLSession(
                configuration: sessionConfiguration(captured: captured, timeout: timeout),
                delegate: delegate, delegateQueue: nil
            )
            defer { session.finishTasksAndInvalidate() }
            let (request, upload) = try make()
            // Cookies one run stores must not change what the next one sends.
            HTTPCookieStorage.shared.cookies?.forEach(HTTPCookieStorage.shared.deleteCookie)
            _ = server.takeRequests()
            let outcome = await performExchange(request, upload: upload, on: session, style: style)
            return (outcome, server.takeRequestsOnceArrived())
        }
        let (expected, expectedRequests) = try await run(captured: false)
        let (actual, actualRequests) = try await run(captured: true)
        XCTAssertEqual(actual, expected, "the app saw something else with the agent", file: file, line: line)
        XCTAssertEqual(actualRequests, expectedRequests, "the server saw something else with the agent", file: file, line: line)

        let (request, _) = try make()
        let suffix = logSuffix ?? request.url!.absoluteString
        var log: NetworkLog?
        eventually {
            log = inspector.finishedFlows(urlSuffix: suffix).last
            // A challenge the app answered logs its 401 as a flow of its own,
            // before the retry's: wait for the flow the app's outcome came
            // from (a log that never has it still fails the checks below).
            guard let status = actual.status else { return log != nil }
            return log?.response?.statusCode == status
        }
        XCTAssertNotNil(log, "no finished flow for \(suffix)", file: file, line: line)
        return Comparison(outcome: actual, requests: actualRequests, log: log)
    }

    /// Asserts the log tells what the server received and the app got.
    func assertLog(
        _ comparison: Comparison,
        state: FlowState = .completed,
        redirects: Int = 0,
        file: StaticString = #filePath,
        line: UInt = #line
    ) {
        guard let log = comparison.log else { return XCTFail("no log", file: file, line: line) }
        let outcome = comparison.outcome
        XCTAssertEqual(log.state, state, file: file, line: line)
        XCTAssertEqual(log.redirects.count, redirects, "\(log.redirects)", file: file, line: line)
        if let sent = comparison.requests.first {
            XCTAssertEqual(log.request.method, sent.method, file: file, line: line)
            let body = log.request.body ?? CapturedBody(data: Data())
            XCTAssertEqual(body.size, sent.body.count, "logged request body size", file: file, line: line)
            XCTAssertEqual(body.data, Data(sent.body.prefix(agent.configuration.bodyCaptureLimit)), "logged request body", file: file, line: line)
        }
        if let status = outcome.status {
            XCTAssertEqual(log.response?.statusCode, status, file: file, line: line)
            let loggedHeaders = Dictionary(log.response?.headers.map { ($0.name, $0.value) } ?? [], uniquingKeysWith: { a, _ in a })
            let expectedHeaders = Dictionary(
                agent.configuration.redacting(outcome.headers.map { HTTPHeader(name: $0.key, value: $0.value) }).map { ($0.name, $0.value) },
                uniquingKeysWith: { a, _ in a }
            )
            XCTAssertEqual(loggedHeaders, expectedHeaders, "logged response headers", file: file, line: line)
            if outcome.errorCode == nil {
                let body = log.response?.body ?? CapturedBody(data: Data())
                XCTAssertEqual(body.size, outcome.body.count, "logged response body size", file: file, line: line)
                XCTAssertEqual(body.data, outcome.body.prefix(agent.configuration.bodyCaptureLimit), "logged response body", file: file, line: line)
                XCTAssertEqual(body.isTruncated, outcome.body.count > agent.configuration.bodyCaptureLimit, file: file, line: line)
            }
        }
        XCTAssertEqual(log.error?.code, outcome.errorCode, file: file, line: line)
        XCTAssertEqual(log.error?.domain, outcome.errorDomain, file: file, line: line)
        XCTAssertNotNil(log.timing.finished, file: file, line: line)
        if let first = log.timing.firstResponseByte, let finished = log.timing.finished {
            XCTAssertLessThanOrEqual(log.timing.requestSent ?? 0, first, file: file, line: line)
            XCTAssertLessThanOrEqual(first, finished, file: file, line: line)
        }
    }
}

/// The viewer's side of the control tests: what netinspect sends an agent
/// that allows control, written to the agent's newest connection.
extension AgentTestCase {
    func sendAsViewer(_ message: ViewerMessage) {
        inspector.write(message.frame(), toConnection: inspector.latestConnection())
    }

    /// Pushes `rules` and waits until the agent has them.
    func push(_ rules: [TrafficRule], file: StaticString = #filePath, line: UInt = #line) {
        sendAsViewer(.rules(rules))
        XCTAssertTrue(eventually { agent.rules.rules.count == rules.count }, "the agent took the rules", file: file, line: line)
    }

    /// Sets breakpoints on `filter` (nil: off) and waits until the agent has them.
    func intercept(_ filter: String?, file: StaticString = #filePath, line: UInt = #line) {
        sendAsViewer(.intercept(filter))
        XCTAssertTrue(eventually { agent.breakpoints.isActive == (filter != nil) }, "the agent took the filter", file: file, line: line)
    }
}
