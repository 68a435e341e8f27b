import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// One table of control scenarios, run against every adapter (URLSession in
/// place and re-sent, AsyncHTTPClient's async and future APIs, the OpenAPI
/// middleware): real loopback servers, a real viewer socket sending the
/// viewer's frames. What an adapter cannot do is what ``CaptureClient``
/// declares, and the table expects exactly that.
final class ControlScenarioTests: AgentTestCase, @unchecked Sendable {
    private var serverB: TestHTTPServer!

    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
        configuration.breakpointTimeout = name.contains("Timeout") ? 0.5 : 60
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        serverB = try TestHTTPServer()
    }

    override func tearDown() {
        serverB?.shutdown()
        super.tearDown()
    }

    // MARK: - The viewer

    /// The hold of the flow whose URL contains `marker`, once there is one.
    private func hold(_ phase: HoldPhase, of marker: String) -> FlowHold? {
        var found: FlowHold?
        _ = eventually {
            let flows = inspector.flows
            found = inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                guard case .held(let hold) = message, hold.phase == phase, flows[hold.id]?.request.url.contains(marker) == true else { return nil }
                return hold
            }.first
            return found != nil
        }
        return found
    }

    /// The finished flow whose URL contains `marker`, once there is one.
    private func finished(_ marker: String, where extra: @escaping (NetworkLog) -> Bool = { _ in true }) -> NetworkLog? {
        var found: NetworkLog?
        _ = eventually {
            found = inspector.flows.values.first { $0.state.isFinal && $0.request.url.contains(marker) && extra($0) }
            return found != nil
        }
        return found
    }

    /// Starts the app's request off the test's thread.
    private func start(_ adapter: ControlAdapter, _ request: ScenarioRequest, captured: Bool = true) -> Task<ScenarioOutcome, Never> {
        let agent = captured ? agent : nil
        return Task.detached { await adapter.send(request, agent: agent) }
    }

    /// For a client that cannot send what the viewer asked: once the agent
    /// has read the ask, anything it sent for it would reach the server
    /// before a request the app sends after that, so the app's is all there is.
    private func assertNothingReachesTheServer(through adapter: ControlAdapter, file: StaticString = #filePath, line: UInt = #line) async {
        inspector.waitUntilRead(by: agent, connection: inspector.latestConnection(), file: file, line: line)
        _ = await start(adapter, request("/text", adapter)).value
        XCTAssertEqual(server.takeRequests().map(\.uri), ["/text?via=\(adapter.rawValue)"],
                       "\(adapter): \(adapter.client.limitation(.replay) ?? "")", file: file, line: line)
    }

    private func request(_ path: String, _ adapter: ControlAdapter, on server: TestHTTPServer? = nil) -> ScenarioRequest {
        ScenarioRequest(method: "POST", url: (server ?? self.server).url("\(path)?via=\(adapter.rawValue)"),
                        headers: [("Content-Type", "text/plain"), ("Authorization", "Bearer s3cret")], body: Array("order=7".utf8))
    }

    // MARK: - Rules

    func testHeaderRuleReachesTheServerForEveryAdapter() async throws {
        push([try TrafficRule(.modifyHeaders, spec: "/X-Rule/on")])
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            let outcome = await start(adapter, request("/echo", adapter)).value
            XCTAssertEqual(outcome.status, 200, "\(adapter)")
            let received = server.takeRequests()
            XCTAssertEqual(received.count, 1, "\(adapter)")
            XCTAssertEqual(received.first?.headers.first { $0.name.lowercased() == "x-rule" }?.value, "on", "\(adapter)")
            let flow = finished("via=\(adapter.rawValue)")
            XCTAssertEqual(flow?.changes?.rules, ["modify-headers /X-Rule/on"], "\(adapter)")
            XCTAssertEqual(flow?.request.headers.first("X-Rule"), "on", "\(adapter): the log shows what was sent")
        }
    }

    func testARuleForAHostAndPortChangesOnlyRequestsToThatPortForEveryAdapter() async throws {
        push([try TrafficRule(.modifyHeaders, spec: "/~d 127.0.0.1:\(server.port)/X-Rule/on")])
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            _ = serverB.takeRequests()
            _ = await start(adapter, request("/echo", adapter)).value
            _ = await start(adapter, request("/echo", adapter, on: serverB)).value
            let onPort = server.takeRequests().first?.headers.first { $0.name.lowercased() == "x-rule" }?.value
            XCTAssertEqual(onPort, "on", "\(adapter)")
            let elsewhere = try XCTUnwrap(serverB.takeRequests().first, "\(adapter)")
            XCTAssertFalse(elsewhere.headers.contains { $0.name.lowercased() == "x-rule" }, "\(adapter): the same host on another port")
        }
    }

    func testMapLocalAnswersWithoutTheNetworkForEveryAdapter() async throws {
        var rule = try TrafficRule(.mapLocal, spec: "|/fixture|/srv/items.json")
        rule.files = [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data(#"{"local":true}"#.utf8))]
        push([rule])
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            let outcome = await start(adapter, request("/fixture", adapter)).value
            XCTAssertEqual(outcome.status, 200, "\(adapter)")
            XCTAssertEqual(outcome.body, Array(#"{"local":true}"#.utf8), "\(adapter)")
            XCTAssertEqual(outcome.marked["content-type"], "application/json", "\(adapter)")
            XCTAssertEqual(server.takeRequests().count, 0, "\(adapter): nothing reached the server")
            XCTAssertEqual(finished("via=\(adapter.rawValue)")?.changes?.mockedFrom, "/srv/items.json", "\(adapter)")
        }
    }

    func testMapRemoteSendsTheRequestToTheOtherServerForEveryAdapter() async throws {
        push([try TrafficRule(.mapRemote, spec: "|127.0.0.1:\(server.port)|127.0.0.1:\(serverB.port)")])
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            _ = serverB.takeRequests()
            let outcome = await start(adapter, request("/echo", adapter)).value
            XCTAssertEqual(outcome.status, 200, "\(adapter)")
            XCTAssertEqual(outcome.body, Array("order=7".utf8), "\(adapter)")
            XCTAssertEqual(server.takeRequests().count, 0, "\(adapter): no request reached the original server")
            XCTAssertEqual(serverB.takeRequests().map(\.uri), ["/echo?via=\(adapter.rawValue)"], "\(adapter)")
            let flow = finished("via=\(adapter.rawValue)")
            XCTAssertEqual(flow?.changes?.originalURL, server.url("/echo?via=\(adapter.rawValue)").absoluteString, "\(adapter)")
        }
    }

    // MARK: - Breakpoints

    func testBreakpointEditsOfRequestAndResponseReachServerAndAppForEveryAdapter() async throws {
        intercept("~u /echo")
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            let marker = "via=\(adapter.rawValue)"
            let running = start(adapter, request("/echo", adapter))
            let held = try XCTUnwrap(hold(.request, of: marker), "\(adapter): the request is held")
            XCTAssertEqual(server.requests.count, 0, "\(adapter): nothing is sent while held")
            var edited = try XCTUnwrap(inspector.flows[held.id]).request
            XCTAssertEqual(edited.headers.first("Authorization"), "<redacted>", "\(adapter): the viewer only sees the marker")
            edited.headers.append(HTTPHeader(name: "X-Edited", value: "request"))
            edited.body = CapturedBody(data: Data("order=8".utf8))
            sendAsViewer(.resume(FlowResume(id: held.id, request: edited)))

            let response = try XCTUnwrap(hold(.response, of: marker), "\(adapter): the response is held")
            var answer = try XCTUnwrap(response.response)
            answer.statusCode = 201
            answer.headers.append(HTTPHeader(name: "X-Edited", value: "response"))
            answer.body = CapturedBody(data: Data("edited".utf8))
            sendAsViewer(.resume(FlowResume(id: response.id, response: answer)))

            let outcome = await running.value
            let received = server.takeRequests()
            XCTAssertEqual(received.first?.body, Array("order=8".utf8), "\(adapter)")
            XCTAssertEqual(received.first?.headers.first { $0.name.lowercased() == "x-edited" }?.value, "request", "\(adapter)")
            XCTAssertEqual(received.first?.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret",
                           "\(adapter): a value left at the marker keeps the app's own")
            XCTAssertEqual(outcome.status, 201, "\(adapter)")
            XCTAssertEqual(outcome.body, Array("edited".utf8), "\(adapter)")
            XCTAssertEqual(outcome.marked["x-edited"], "response", "\(adapter)")
            let flow = finished(marker)
            XCTAssertEqual(flow?.changes?.edited, [.request, .response], "\(adapter)")
            XCTAssertEqual(flow?.changes?.originalResponse?.statusCode, 200, "\(adapter)")
            XCTAssertEqual(flow?.response?.statusCode, 201, "\(adapter): the log shows what the app got")
        }
    }

    func testKillAtTheRequestEndsItAsCancelledWithNothingSentForEveryAdapter() async throws {
        intercept("~u /echo")
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            let marker = "via=\(adapter.rawValue)"
            let running = start(adapter, request("/echo", adapter))
            let held = try XCTUnwrap(hold(.request, of: marker), "\(adapter)")
            sendAsViewer(.kill(held.id))
            let outcome = await running.value
            XCTAssertTrue(outcome.failed, "\(adapter): the app sees its request end: \(outcome)")
            XCTAssertEqual(server.takeRequests().count, 0, "\(adapter)")
            XCTAssertEqual(finished(marker)?.state, .cancelled, "\(adapter)")
        }
    }

    func testKillAtTheResponseKeepsItFromTheAppForEveryAdapter() async throws {
        intercept("~u /text & ~s")
        for adapter in ControlAdapter.allCases {
            let marker = "via=\(adapter.rawValue)"
            let running = start(adapter, request("/text", adapter))
            let held = try XCTUnwrap(hold(.response, of: marker), "\(adapter)")
            sendAsViewer(.kill(held.id))
            let outcome = await running.value
            XCTAssertTrue(outcome.failed, "\(adapter): \(outcome)")
            XCTAssertEqual(finished(marker)?.state, .cancelled, "\(adapter)")
        }
    }

    /// An HTTP/1.0 server ends the body by closing the connection, while the
    /// response is held: the app still gets the whole of it once released.
    func testAHeldResponseThatTheServersCloseEndsReachesTheAppWholeForEveryAdapter() async throws {
        intercept("~u /close-delimited & ~s")
        for adapter in ControlAdapter.allCases {
            let marker = "via=\(adapter.rawValue)"
            let running = start(adapter, request("/close-delimited", adapter))
            if adapter.holdsBodiesOfUnknownLength {
                let held = try XCTUnwrap(hold(.response, of: marker), "\(adapter)")
                XCTAssertEqual(held.response?.statusCode, 200, "\(adapter)")
                sendAsViewer(.resume(FlowResume(id: held.id)))
            }
            let outcome = await running.value
            XCTAssertEqual(outcome.status, 200, "\(adapter): \(outcome)")
            XCTAssertEqual(outcome.body, TestHTTPServer.textBody, "\(adapter)")
            XCTAssertFalse(outcome.failed, "\(adapter)")
            XCTAssertEqual(finished(marker)?.state, .completed, "\(adapter)")
        }
    }

    func testABreakpointTimeoutLetsTheExchangeGoOnUnchangedForEveryAdapter() async throws {
        intercept("~u /echo")
        for adapter in ControlAdapter.allCases {
            let plain = await start(adapter, request("/echo", adapter), captured: false).value
            _ = server.takeRequests()
            let outcome = await start(adapter, request("/echo", adapter)).value
            XCTAssertEqual(outcome, plain, "\(adapter): after the timeout the app sees what it sees without the agent")
            XCTAssertEqual(server.takeRequests().count, 1, "\(adapter)")
            let marker = "via=\(adapter.rawValue)"
            // The viewer reads `released` off the socket a moment after the app goes on.
            XCTAssertTrue(eventually { self.releases(of: marker).count == 2 }, "\(adapter)")
            XCTAssertEqual(releases(of: marker).map(\.reason), [.timeout, .timeout], "\(adapter): request and response each timed out")
        }
    }

    private func releases(of marker: String) -> [FlowRelease] {
        let flows = inspector.flows
        return inspector.allMessages.compactMap { message -> FlowRelease? in
            guard case .released(let release) = message, flows[release.id]?.request.url.contains(marker) == true else { return nil }
            return release
        }
    }

    func testTheViewerGoingAwayReleasesAHeldRequestUnchangedForEveryAdapter() async throws {
        for adapter in ControlAdapter.allCases {
            XCTAssertTrue(eventually { agent.isConnected }, "\(adapter): a viewer is there")
            let plain = await start(adapter, request("/echo", adapter), captured: false).value
            intercept("~u /echo")
            _ = server.takeRequests()
            let running = start(adapter, request("/echo", adapter))
            XCTAssertNotNil(hold(.request, of: "via=\(adapter.rawValue)"), "\(adapter)")
            let connections = inspector.messagesByConnection.count
            inspector.dropConnections()
            let outcome = await running.value
            XCTAssertEqual(outcome, plain, "\(adapter)")
            XCTAssertEqual(server.takeRequests().count, 1, "\(adapter)")
            XCTAssertEqual(agent.breakpoints.heldCount, 0, "\(adapter)")
            XCTAssertTrue(eventually { inspector.messagesByConnection.count > connections }, "\(adapter): the agent connects again")
        }
    }

    // MARK: - Replay

    func testReplaySendsTheRequestAgainWhereTheClientCanForEveryAdapter() async throws {
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            let marker = "via=\(adapter.rawValue)"
            _ = await start(adapter, request("/echo", adapter)).value
            let original = try XCTUnwrap(finished(marker), "\(adapter)")
            XCTAssertEqual(server.takeRequests().count, 1)
            sendAsViewer(.replay(original.id))
            if adapter.client.can(.replay) {
                let replay = finished(marker) { $0.changes?.replayOf == original.id }
                XCTAssertNotNil(replay, "\(adapter): the replay is a flow that says what it replays")
                let received = server.takeRequests()
                XCTAssertEqual(received.map(\.body), [Array("order=7".utf8)], "\(adapter)")
                XCTAssertEqual(received.first?.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret",
                               "\(adapter): the replay sends the app's unredacted request")
            } else {
                await assertNothingReachesTheServer(through: adapter)
            }
        }
    }

    /// A request a person wrote (netinspect's `n`, `:new curl`) goes out
    /// through the client of a flow the agent keeps, as a flow of its own
    /// marked composed: no replay of that flow, none of its fields.
    func testComposeSendsAPersonsRequestThroughTheAppsClientForEveryAdapter() async throws {
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            _ = await start(adapter, request("/echo", adapter)).value
            let original = try XCTUnwrap(finished("via=\(adapter.rawValue)"), "\(adapter)")
            XCTAssertEqual(server.takeRequests().count, 1)
            let marker = "composed=\(adapter.rawValue)"
            let written = Request(method: "PUT", url: server.url("/echo?\(marker)").absoluteString,
                                  headers: [HTTPHeader(name: "X-Written", value: "by hand")], body: CapturedBody(data: Data("new".utf8)))
            sendAsViewer(.compose(through: original.id, written))
            if adapter.client.can(.replay) {
                let composed = try XCTUnwrap(finished(marker), "\(adapter): the request is a flow of its own")
                XCTAssertEqual(composed.changes?.composed, true, "\(adapter)")
                XCTAssertNil(composed.changes?.replayOf, "\(adapter): no replay of the flow whose client it borrowed")
                XCTAssertNil(composed.changes?.edited, "\(adapter)")
                let received = try XCTUnwrap(server.takeRequests().first, "\(adapter)")
                XCTAssertEqual(received.method, "PUT", "\(adapter)")
                XCTAssertEqual(received.body, Array("new".utf8), "\(adapter)")
                XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-written" }?.value, "by hand", "\(adapter)")
                XCTAssertNil(received.headers.first { $0.name.lowercased() == "authorization" }, "\(adapter): nothing of the carrier's request")
            } else {
                await assertNothingReachesTheServer(through: adapter)
            }
        }
    }
}

/// An app that did not opt in to control: whatever a viewer sends, every
/// adapter's traffic is what it is without the agent.
final class ControlNotOptedInTests: AgentTestCase, @unchecked Sendable {
    func testAnAppThatDidNotOptInIsNeverChangedByAnyAdapter() async throws {
        var local = try TrafficRule(.mapLocal, spec: "|/echo|/srv/x")
        local.files = [TrafficRule.LocalFile(path: "", contentType: "text/plain", data: Data("local".utf8))]
        let viewer = inspector.latestConnection()
        let conditions = [try TrafficRule(.condition, spec: "|~u via=url|latency=300ms fail=100%:reset"), try TrafficRule(.condition, spec: "||offline")]
        inspector.write(ViewerMessage.rules([try TrafficRule(.modifyHeaders, spec: "/X-Rule/on"), local] + conditions).frame(), toConnection: viewer)
        inspector.write(ViewerMessage.intercept("~q").frame(), toConnection: viewer)
        // A server replay that would answer every request 404, were it taken.
        var answerAll = ServerReplayOptions()
        answerAll.extra = .notFound
        inspector.write(ViewerMessage.serverReplay(ServerReplayBook(options: answerAll, entries: [])).frame(), toConnection: viewer)
        inspector.write(Receipt(events: 1).frame(), toConnection: viewer)
        inspector.waitUntilRead(by: agent, connection: viewer)
        XCTAssertFalse(agent.allowsControl)
        XCTAssertEqual(agent.rules.rules.count, 0)
        XCTAssertFalse(agent.breakpoints.isActive)
        XCTAssertFalse(agent.serverReplay.isActive)
        for adapter in ControlAdapter.allCases {
            let request = ScenarioRequest(method: "POST", url: server.url("/echo?via=\(adapter.rawValue)"), body: Array("order=7".utf8))
            _ = server.takeRequests()
            let plain = await adapter.send(request, agent: nil)
            let plainRequests = server.takeRequests()
            let captured = await adapter.send(request, agent: agent)
            XCTAssertEqual(captured, plain, "\(adapter)")
            XCTAssertEqual(server.takeRequests(), plainRequests, "\(adapter)")
            XCTAssertEqual(plain.body, Array("order=7".utf8), "\(adapter)")
        }
        XCTAssertTrue(inspector.allMessages.allSatisfy { if case .held = $0 { false } else { true } }, "nothing was held")
    }
}
