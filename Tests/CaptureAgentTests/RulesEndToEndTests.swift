import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Traffic rules end to end: the real `netinspect --json` with rule flags as
/// the viewer, an app in this process with a captured session, and real
/// loopback servers that record what reaches them.
final class RulesEndToEndTests: XCTestCase, @unchecked Sendable {
    private var serverA: TestHTTPServer!
    private var serverB: TestHTTPServer!
    private var scratch: URL!

    override func setUpWithError() throws {
        serverA = try TestHTTPServer()
        serverB = try TestHTTPServer()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        serverA?.shutdown()
        serverB?.shutdown()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    private struct Setup {
        var inspector: InspectorProcess
        var agent: CaptureAgent
        var session: URLSession

        func finish() {
            session.finishTasksAndInvalidate()
            agent.stop()
            inspector.killAndWait()
        }
    }

    /// netinspect with `rules`, then an agent started right after it.
    private func start(rules: [String], allowsControl: Bool = true, name: String = #function) throws -> Setup {
        let path = temporarySocketPath(String(name.prefix { $0 != "(" }.suffix(24)))
        let inspector = try InspectorProcess(listen: "unix:\(path)", arguments: rules)
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) {
            $0.allowsControl = allowsControl
            $0.flushTimeout = 1
            $0.initialConnectionWait = 5
        })
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        return Setup(inspector: inspector, agent: agent, session: URLSession(configuration: configuration))
    }

    /// The flows netinspect printed, once there are `count`.
    private func flows(_ inspector: InspectorProcess, count: Int) throws -> [NetworkLog] {
        XCTAssertTrue(eventually { inspector.lineCount >= count }, "\(inspector.lineCount) of \(count) flows printed: \(inspector.errorOutput)")
        return try inspector.output.split(separator: "\n").map { try NetworkLog(jsonLine: Array($0.utf8)) }
    }

    func testAConditionDelaysAndFailsTheAppsRequestsAndJSONSaysWhatItDid() throws {
        let setup = try start(rules: ["--condition", "|~u slow|latency=300ms", "--condition", "|~u broken|fail=100%:reset"])
        defer { setup.finish() }

        let (slow, seconds) = fetch(URLRequest(url: serverA.url("/text?slow")), on: setup.session)
        XCTAssertEqual(slow.status, 200)
        XCTAssertGreaterThanOrEqual(seconds, 0.3)
        let (broken, _) = fetch(URLRequest(url: serverA.url("/text?broken")), on: setup.session)
        XCTAssertEqual(broken.errorCode, URLError.networkConnectionLost.rawValue)
        XCTAssertEqual(serverA.requests.map(\.uri), ["/text?slow"], "the failed request never reached the server")

        let flows = try flows(setup.inspector, count: 2)
        let slowFlow = try XCTUnwrap(flows.first { $0.request.url.hasSuffix("?slow") })
        XCTAssertEqual(slowFlow.changes?.condition, AppliedCondition(rule: "condition |~u slow|latency=300ms", latencyMilliseconds: 300))
        let brokenFlow = try XCTUnwrap(flows.first { $0.request.url.hasSuffix("?broken") })
        XCTAssertEqual(brokenFlow.changes?.condition?.failure, "reset")
        XCTAssertEqual(brokenFlow.error?.code, URLError.networkConnectionLost.rawValue)
    }

    func testMapRemoteSendsTheFirstRequestToTheOtherServerAndTheFlowShowsBothURLs() throws {
        let a = "127.0.0.1:\(serverA.port)", b = "127.0.0.1:\(serverB.port)"
        let setup = try start(rules: ["--map-remote", "|\(a)|\(b)"])
        defer { setup.finish() }

        // The very first request after start(): the rules are already in force.
        let (outcome, _) = fetch(URLRequest(url: serverA.url("/text?first")), on: setup.session)
        XCTAssertEqual(outcome.status, 200)
        XCTAssertEqual(serverA.requests.count, 0, "nothing reached the original server")
        XCTAssertEqual(serverB.requests.map(\.uri), ["/text?first"])
        XCTAssertEqual(outcome.body, Data(TestHTTPServer.textBody))

        let flow = try XCTUnwrap(try flows(setup.inspector, count: 1).first)
        XCTAssertEqual(flow.request.url, serverB.url("/text?first").absoluteString)
        XCTAssertEqual(flow.changes?.originalURL, serverA.url("/text?first").absoluteString)
        XCTAssertEqual(flow.changes?.rules, ["map-remote |\(a)|\(b)"])
        XCTAssertTrue(setup.inspector.errorOutput.contains("accepts control"), setup.inspector.errorOutput)
    }

    func testMapLocalAnswersFromAFileAndADirectoryWithNoNetwork() throws {
        let file = scratch.appendingPathComponent("items.json")
        try Data(#"{"items":[1,2,3]}"#.utf8).write(to: file)
        let directory = scratch.appendingPathComponent("static")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("css"), withIntermediateDirectories: true)
        try Data("body{}".utf8).write(to: directory.appendingPathComponent("css/site.css"))
        let setup = try start(rules: ["--map-local", "|/api/items|\(file.path)", "--map-local", "|/static|\(directory.path)"])
        defer { setup.finish() }

        let (json, _) = fetch(URLRequest(url: serverA.url("/api/items?page=2")), on: setup.session)
        XCTAssertEqual(json.status, 200)
        XCTAssertEqual(json.body, Data(#"{"items":[1,2,3]}"#.utf8))
        XCTAssertEqual(json.headers["Content-Type"], "application/json")
        let (css, _) = fetch(URLRequest(url: serverA.url("/static/css/site.css")), on: setup.session)
        XCTAssertEqual(css.status, 200)
        XCTAssertEqual(css.body, Data("body{}".utf8))
        XCTAssertEqual(css.headers["Content-Type"], "text/css; charset=utf-8")
        let (missing, _) = fetch(URLRequest(url: serverA.url("/static/nope.js")), on: setup.session)
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(serverA.requests.count, 0, "no request went on the network")

        let logged = try flows(setup.inspector, count: 3)
        XCTAssertEqual(logged.map { $0.changes?.mockedFrom }, [file.path, directory.path, directory.path])
        XCTAssertEqual(logged.map { $0.response?.statusCode }, [200, 200, 404])
        XCTAssertEqual(logged.first?.response?.body?.data, Data(#"{"items":[1,2,3]}"#.utf8))
    }

    func testAHeaderRuleSetsAndRemovesFieldsTheServerReceives() throws {
        let setup = try start(rules: ["--modify-headers", "/X-Env/staging", "--modify-headers", "/~m POST/X-Debug/"])
        defer { setup.finish() }
        var request = URLRequest(url: serverA.url("/echo"))
        request.httpMethod = "POST"
        request.httpBody = Data("x".utf8)
        request.setValue("1", forHTTPHeaderField: "X-Debug")
        let (outcome, _) = fetch(request, on: setup.session)
        XCTAssertNotNil(outcome.status)
        let received = try XCTUnwrap(serverA.requests.first)
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-env" }?.value, "staging")
        XCTAssertNil(received.headers.first { $0.name.lowercased() == "x-debug" }, "an empty value removes the field")
        let flow = try XCTUnwrap(try flows(setup.inspector, count: 1).first)
        XCTAssertEqual(flow.changes?.originalHeaders?.first { $0.name == "X-Debug" }?.value, "1")
        XCTAssertEqual(flow.request.headers.first("X-Env"), "staging")
    }

    func testAnAppThatDidNotOptInIsNeverChanged() throws {
        let setup = try start(rules: ["--map-remote", "|127.0.0.1:\(serverA.port)|127.0.0.1:\(serverB.port)"], allowsControl: false)
        defer { setup.finish() }
        let (outcome, _) = fetch(URLRequest(url: serverA.url("/text?mine")), on: setup.session)
        XCTAssertEqual(outcome.status, 200)
        XCTAssertEqual(serverA.requests.map(\.uri), ["/text?mine"])
        XCTAssertEqual(serverB.requests.count, 0)
        let flow = try XCTUnwrap(try flows(setup.inspector, count: 1).first)
        XCTAssertNil(flow.changes)
        XCTAssertFalse(setup.inspector.errorOutput.contains("accepts control"))
    }

    func testRulesGoWithTheViewerThatSentThem() throws {
        let setup = try start(rules: ["--map-remote", "|127.0.0.1:\(serverA.port)|127.0.0.1:\(serverB.port)"])
        defer { setup.finish() }
        _ = fetch(URLRequest(url: serverA.url("/text?before")), on: setup.session)
        XCTAssertEqual(serverB.requests.map(\.uri), ["/text?before"])
        setup.inspector.killAndWait()
        XCTAssertTrue(eventually { !setup.agent.isConnected })
        let (outcome, _) = fetch(URLRequest(url: serverA.url("/text?after")), on: setup.session)
        XCTAssertEqual(outcome.status, 200)
        XCTAssertEqual(serverA.requests.map(\.uri), ["/text?after"], "the app's own request again")
        XCTAssertTrue(setup.agent.rules.rules.isEmpty)
    }

    func testTheEnvironmentVariableAllowsControl() throws {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: temporarySocketPath("envcontrol"))) { $0.initialConnectionWait = 0 },
                                           clock: .system, environment: [CaptureAgent.controlVariable: "1"])
        defer { agent.stop() }
        XCTAssertTrue(agent.allowsControl)
    }

    func testControlIsOffByDefault() throws {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: temporarySocketPath("nocontrol"))) { $0.initialConnectionWait = 0 },
                                           clock: .system, environment: [:])
        defer { agent.stop() }
        XCTAssertFalse(agent.allowsControl)
    }
}
