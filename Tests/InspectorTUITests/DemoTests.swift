#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

@testable import InspectorTUI

/// `netinspect --demo`: the demo server, the real CaptureAgent and the real
/// socket, in process and through the built binary.
final class DemoTests: XCTestCase {
    private var tmux: TmuxSession?

    override func tearDown() {
        tmux?.kill()
        tmux = nil
        super.tearDown()
    }

    /// README's "Try it" holds the next POST: every fifth tick sends one,
    /// whatever the dice say about the rest.
    func testEveryFifthTickSendsAnOrder() {
        let traffic = DemoTraffic(port: 1, refusedPort: 2)
        for number in [5, 10, 15] {
            XCTAssertTrue(traffic.tick(number).contains { $0.httpMethod == "POST" && $0.url?.path == "/api/orders" }, "tick \(number)")
        }
    }

    /// One full cycle of the workload reaches a real listener through the
    /// agent, one flow of each kind, as the agent recorded it.
    func testOneCycleOfEveryKindArrivesThroughTheAgent() throws {
        let (inbox, bound) = try listen()
        // No second tick within the test: exactly one request of each kind.
        let demo = try DemoWorkload.start(inspector: bound, token: nil, interval: .seconds(60))
        defer { demo.stop() }
        let expected = DemoTraffic(port: 1, refusedPort: 2).cycle.count
        var log = DemoLog()
        log.collect(from: inbox, until: { $0.flows.count >= expected }, timeout: .seconds(10))
        XCTAssertEqual(log.flows.count, expected, "finished flows: \(log.flows.map(\.path))")

        XCTAssertEqual(log.hellos.map(\.appName), [DemoWorkload.appName])
        XCTAssertEqual(log.hellos.first?.agentName, "CaptureAgent")
        for flow in log.flows {
            XCTAssertEqual(flow.request.headers.first("Authorization"), "<redacted>", "the agent redacts the bearer token: \(flow.path)")
            XCTAssertNotNil(flow.request.headers.first("X-Request-ID"), flow.path)
            if let response = flow.response {
                XCTAssertEqual(response.headers.first("X-Request-ID"), flow.request.headers.first("X-Request-ID"), "echoed: \(flow.path)")
            }
        }

        let page = try log.flow("GET", "/api/users")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.response?.mimeType, "application/json")
        let users = try XCTUnwrap(page.json?["users"] as? [[String: Any]])
        XCTAssertEqual(users.count, 4)
        XCTAssertTrue(users.contains { ($0["name"] as? String)?.contains { !$0.isASCII } == true }, "\(users)")

        let order = try log.flow("POST", "/api/orders")
        XCTAssertEqual(order.status, 201)
        XCTAssertTrue(order.requestText.contains("Zoë Müller") && order.requestText.contains("☕"), order.requestText)
        XCTAssertEqual(order.response?.headers.first("Content-Type"), "application/json; charset=utf-8")

        let login = try log.flow("POST", "/api/login")
        XCTAssertEqual(login.status, 200)
        XCTAssertEqual(login.request.headers.first("Content-Type"), "application/x-www-form-urlencoded")
        XCTAssertTrue(login.requestText.hasPrefix("username=jos%C3%A9&"), login.requestText)
        XCTAssertEqual(login.response?.headers.first("Set-Cookie"), "<redacted>")

        let redirected = try log.flow("GET", "/me")
        XCTAssertEqual(redirected.status, 200)
        XCTAssertEqual(redirected.redirects.map(\.statusCode), [302])
        XCTAssertEqual(redirected.redirects.first.map { URL(string: $0.to)?.path }, "/api/users/7")
        XCTAssertEqual(redirected.json?["id"] as? Int, 7)

        let missing = try log.flow("GET", "/api/users/", where: { $0.status == 404 })
        XCTAssertEqual(missing.json?["error"] as? String, "not_found")
        XCTAssertEqual(try log.flow("GET", "/api/reports/today").status, 500)
        XCTAssertEqual(try log.flow("DELETE", "/api/orders/").status, 204)

        let slow = try log.flow("GET", "/api/search")
        XCTAssertGreaterThanOrEqual(slow.finished.timing.duration ?? 0, 1.4, "the slow response takes 1.5 s")

        let image = try log.flow("GET", "/static/avatar.png")
        let body = try XCTUnwrap(image.response?.body)
        XCTAssertEqual(image.response?.mimeType, "image/png")
        XCTAssertEqual(Array(body.data.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertTrue((20_000 ... 200_000).contains(body.size), "\(body.size) bytes")
        XCTAssertEqual(body.data.count, body.size, "captured whole")

        let feed = try log.flow("GET", "/api/feed")
        XCTAssertEqual(feed.response?.headers.first("Content-Encoding"), "gzip")
        XCTAssertEqual((feed.json?["items"] as? [Any])?.count, 24, "the gzip body arrives decoded")

        let refused = try log.flow("GET", "/api/health")
        XCTAssertEqual(refused.finished.state, .failed)
        XCTAssertNil(refused.response)
        XCTAssertEqual(refused.finished.error?.code, -1004, "NSURLErrorCannotConnectToHost: \(String(describing: refused.finished.error))")
        XCTAssertTrue(refused.finished.error?.message.localizedCaseInsensitiveContains("connect") == true, "\(String(describing: refused.finished.error))")

        let stopping = ContinuousClock.now
        demo.stop()
        let stopTime = ContinuousClock.now - stopping
        XCTAssertLessThan(stopTime, .seconds(1))
        log.collect(from: inbox, until: { $0.disconnections > 0 }, timeout: .seconds(2))
        XCTAssertEqual(log.disconnections, 1, "the agent hung up when the demo stopped")
    }

    /// The built binary with `--demo` shows live traffic, including a 404
    /// and a 500, and quits cleanly on Q, removing its socket. It quits while
    /// the first cycle's slow request (1.5 s) is still running.
    func testNetinspectDemoShowsTrafficAndQuitsCleanly() throws {
        let ui = try TmuxSession(name: #function, arguments: ["--demo"])
        tmux = ui
        let screen = try ui.waitFor(" 500 ", where: {
            $0.contains(" 404 ") && $0.contains("image/png") && Self.flowCount(in: $0) >= 9
        })
        XCTAssertTrue(screen.contains("/api/users?page="), screen)
        XCTAssertTrue(screen.contains("\(DemoWorkload.appName) (pid"), "the demo's agent connected:\n\(screen)")

        let quitting = Date()
        ui.send("Q")
        let exit = try ui.waitForExit()
        XCTAssertTrue(exit.isClean, "\(exit)")
        XCTAssertLessThan(Date().timeIntervalSince(quitting), 2, "quits promptly with the demo running")
        XCTAssertFalse(FileManager.default.fileExists(atPath: ui.socketPath), "socket file left behind")
    }

    /// Stopping while requests are being made and answered returns at once
    /// and does not trap (Foundation traps on tasks made on an invalidated
    /// session).
    func testStoppingWhileRequestsAreInFlight() throws {
        let (inbox, bound) = try listen()
        let demo = try DemoWorkload.start(inspector: bound, token: nil, interval: .seconds(60))
        defer { demo.stop() }
        var log = DemoLog()
        log.collect(from: inbox, until: { $0.startedPaths.contains("/api/search") }, timeout: .seconds(5))
        XCTAssertTrue(log.startedPaths.contains("/api/search"), "\(log.startedPaths)")
        XCTAssertFalse(log.flows.contains { $0.path == "/api/search" }, "the slow request is still running")

        let stopping = ContinuousClock.now
        demo.stop()
        XCTAssertLessThan(ContinuousClock.now - stopping, .seconds(1))
        log.collect(from: inbox, until: { $0.disconnections > 0 }, timeout: .seconds(2))
        XCTAssertEqual(log.disconnections, 1)
    }

    /// The demo app takes the path apps take (a completion handler: captured
    /// in place, with the client's own headers and phases) and allows
    /// control, so replay, breakpoints and rules work in the demo.
    func testTheDemoAllowsControlAndIsCapturedInPlace() throws {
        let (inbox, bound) = try listen()
        let demo = try DemoWorkload.start(inspector: bound, token: nil, interval: .seconds(60))
        defer { demo.stop() }
        var hello: Hello?
        var sources: [CaptureSource.Path?] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while sources.count < 3, ContinuousClock.now < deadline {
            for event in inbox.wait(timeout: .seconds(1)) {
                switch event {
                case .connected(_, let greeting, _): hello = greeting
                case .message(_, .flowStarted(let log)): sources.append(log.source?.path)
                default: break
                }
            }
        }
        XCTAssertEqual(hello?.acceptsControl, true)
        XCTAssertGreaterThanOrEqual(sources.count, 3)
        XCTAssertEqual(Set(sources), [CaptureSource.Path.inPlace], "\(sources)")
    }

    func testTheDemoListensOnASocketOfItsOwn() throws {
        let demo = try Netinspect.parse(["--demo"])
        XCTAssertEqual(try demo.endpoints, [Netinspect.demoEndpoint()])
        XCTAssertNotEqual(Netinspect.demoEndpoint(), Endpoint.defaultEndpoint())
        XCTAssertEqual(try Netinspect.parse(["--demo", "--listen", "unix:/tmp/x.sock"]).endpoints, [.unix(path: "/tmp/x.sock")])
    }

    func testTheFlagAndWhereTheAgentConnects() throws {
        XCTAssertTrue(try Netinspect.parse(["--demo"]).demo)
        XCTAssertFalse(try Netinspect.parse([]).demo)
        let unix = Endpoint.unix(path: "/tmp/x.sock")
        XCTAssertEqual(DemoWorkload.destination(for: [.tcp(host: "127.0.0.1", port: 9), unix]), unix, "a Unix socket first")
        XCTAssertEqual(DemoWorkload.destination(for: [.tcp(host: "0.0.0.0", port: 9123)]), .tcp(host: "127.0.0.1", port: 9123))
        XCTAssertEqual(DemoWorkload.destination(for: [.tcp(host: "::", port: 9123)]), .tcp(host: "::1", port: 9123))
        XCTAssertEqual(DemoWorkload.destination(for: [.tcp(host: "127.0.0.1", port: 40001)]), .tcp(host: "127.0.0.1", port: 40001))
    }

    /// A listener on a fresh Unix socket, shut down and removed after the test.
    private func listen() throws -> (Inbox, [Endpoint]) {
        var template = Array("/tmp/ni-demo-XXXXXX".utf8CString)
        let directory = String(cString: try XCTUnwrap(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
        let inbox = Inbox()
        let listener = InspectorListener(configuration: ListenerConfiguration(endpoints: [.unix(path: directory + "/demo.sock")]), inbox: inbox)
        addTeardownBlock {
            listener.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
        return (inbox, try listener.start())
    }

    /// N of the status bar's "N/M flows".
    private static func flowCount(in screen: String) -> Int {
        guard let match = screen.firstMatch(of: /(\d+)\/\d+ flows/) else { return 0 }
        return Int(match.1) ?? 0
    }
}

// MARK: - Helpers

/// What the demo's agent sent, gathered from an inbox.
private struct DemoLog {
    /// A finished flow: its start with its later events applied, or one
    /// `flowStarted` that already carried it finished (protocol version 2).
    struct Flow {
        var finished: NetworkLog

        var request: Request { finished.request }
        var path: String { URL(string: request.url)?.path ?? request.url }
        var status: Int? { finished.response?.statusCode }
        var response: Response? { finished.response }
        var redirects: [RedirectHop] { finished.redirects }
        var requestText: String {
            String(decoding: request.body?.data ?? Data(), as: UTF8.self)
        }
        var json: [String: Any]? {
            (response?.body?.data).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
    }

    var hellos: [Hello] = []
    var startedPaths: Set<String> = []
    var disconnections = 0
    private var started: [FlowID: NetworkLog] = [:]
    private(set) var flows: [Flow] = []

    mutating func collect(from inbox: Inbox, until done: (DemoLog) -> Bool, timeout: Duration) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !done(self) {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return }
            for event in inbox.wait(timeout: remaining) { apply(event) }
        }
    }

    private mutating func apply(_ event: InboxEvent) {
        switch event {
        case .connected(_, let hello, _): hellos.append(hello)
        case .disconnected: disconnections += 1
        case .message(_, .flowStarted(let log)):
            startedPaths.insert(URL(string: log.request.url)?.path ?? log.request.url)
            if log.state.isFinal { flows.append(Flow(finished: log)) } else { started[log.id] = log }
        case .message(_, .flowResponse(let event)):
            started[event.id]?.apply(event)
        case .message(_, .flowFinished(let event)):
            if var log = started.removeValue(forKey: event.id) {
                log.apply(event)
                flows.append(Flow(finished: log))
            }
        default: break
        }
    }

    /// The one finished flow with this method whose path starts with `path`
    /// (equals it, unless it ends in a slash) and that passes `condition`.
    func flow(_ method: String, _ path: String, where condition: (Flow) -> Bool = { _ in true }) throws -> Flow {
        let matches = flows.filter { flow in
            flow.request.method == method && (path.hasSuffix("/") ? flow.path.hasPrefix(path) : flow.path == path) && condition(flow)
        }
        guard matches.count == 1 else {
            throw E2EError("\(matches.count) flows for \(method) \(path); finished: \(flows.map { "\($0.request.method) \($0.path)" })")
        }
        return matches[0]
    }
}
