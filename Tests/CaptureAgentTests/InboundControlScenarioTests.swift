#if (Hummingbird || Vapor) && AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import WireProtocol
import XCTest
@testable import CaptureAgent

/// One table of control scenarios for a service's inbound requests, run
/// against every server framework's middleware (``InboundFramework``): a
/// real service on loopback, a real AsyncHTTPClient as its client, a real
/// viewer socket sending the viewer's frames. The client must see what the
/// viewer decided, and the handler must (or must not) have run.
final class InboundControlScenarioTests: AgentTestCase, @unchecked Sendable {
    private var services: [InboundFramework: any InboundService] = [:]

    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
        configuration.breakpointTimeout = name.contains("Timeout") ? 0.5 : 60
    }

    override func tearDown() async throws {
        for service in services.values { await service.stop() }
    }

    private func service(_ framework: InboundFramework) async throws -> any InboundService {
        if let running = services[framework] { return running }
        let started = try await framework.start(captureInto: agent)
        services[framework] = started
        return started
    }

    // MARK: - The viewer

    private func hold(_ phase: HoldPhase, of marker: String) async -> FlowHold? {
        var found: FlowHold?
        _ = await waitUntil {
            let flows = inspector.flows
            found = inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                guard case .held(let hold) = message, hold.phase == phase, flows[hold.id]?.request.url.contains(marker) == true else { return nil }
                return hold
            }.first
            return found != nil
        }
        return found
    }

    private func finished(_ marker: String) async -> NetworkLog? {
        var found: NetworkLog?
        _ = await waitUntil {
            found = inspector.flows.values.first { $0.state.isFinal && $0.request.url.contains(marker) }
            return found != nil
        }
        return found
    }

    /// The client's request, started off the test's task.
    private func start(_ method: HTTPMethod, _ path: String, on service: any InboundService, body: String? = nil) -> Task<ClientView?, Never> {
        let url = "http://127.0.0.1:\(service.port)\(path)"
        return Task.detached {
            try? await ClientView.fetch(method, url, body: body.map { Array($0.utf8) }, headers: [("X-Client", "1")])
        }
    }

    // MARK: - Rules

    func testAHeaderRuleChangesWhatTheHandlerSees() async throws {
        push([try TrafficRule(.modifyHeaders, spec: "/X-Rule/on")])
        for framework in InboundFramework.allCases {
            let service = try await service(framework)
            let seen = await start(.POST, "/echo?via=\(framework)", on: service, body: "order=7").value
            XCTAssertEqual(seen?.field("x-rule"), "on", "\(framework): the handler saw the rule's field")
            XCTAssertEqual(seen?.body, Array("order=7".utf8), "\(framework)")
            let flow = await finished("via=\(framework)")
            XCTAssertEqual(flow?.changes?.rules, ["modify-headers /X-Rule/on"], "\(framework)")
            XCTAssertEqual(flow?.request.headers.first("X-Rule"), "on", "\(framework): the log shows what the handler got")
        }
    }

    func testMapLocalAnswersARouteWithoutRunningAHandler() async throws {
        var rule = try TrafficRule(.mapLocal, spec: "|/not-written-yet|/srv/items.json")
        rule.files = [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data(#"{"local":true}"#.utf8))]
        push([rule])
        for framework in InboundFramework.allCases {
            let service = try await service(framework)
            let seen = await start(.GET, "/not-written-yet?via=\(framework)", on: service).value
            XCTAssertEqual(seen?.status, 200, "\(framework): the route does not exist, the rule answers it")
            XCTAssertEqual(seen?.body, Array(#"{"local":true}"#.utf8), "\(framework)")
            XCTAssertEqual(seen?.field("content-type"), "application/json", "\(framework)")
            XCTAssertEqual(service.handlerRuns, 0, "\(framework): no handler ran")
            let flow = await finished("via=\(framework)")
            XCTAssertEqual(flow?.changes?.mockedFrom, "/srv/items.json", "\(framework)")
            XCTAssertEqual(flow?.response?.body?.data, Data(#"{"local":true}"#.utf8), "\(framework)")
        }
    }

    func testMapRemoteDoesNotApplyToAServicesOwnRequests() async throws {
        for framework in InboundFramework.allCases {
            let service = try await service(framework)
            push([try TrafficRule(.mapRemote, spec: "|127.0.0.1:\(service.port)|127.0.0.1:1")])
            let seen = await start(.GET, "/text?via=\(framework)", on: service).value
            XCTAssertEqual(seen?.body, Array("hello".utf8), "\(framework): \(framework.client.limitation(.mapRemote) ?? "")")
            let flow = await finished("via=\(framework)")
            XCTAssertNil(flow?.changes, "\(framework)")
        }
    }

    // MARK: - Conditions

    func testAConditionDelaysTheServicesResponseAndAFailureIsAnsweredWithoutTheHandler() async throws {
        push([try TrafficRule(.condition, spec: "|~u slow|latency=300ms"), try TrafficRule(.condition, spec: "|~u broken|fail=100%:reset")])
        for framework in InboundFramework.allCases where framework.client.can(.condition) {
            let service = try await service(framework)
            let clock = ContinuousClock()
            let start = clock.now
            let slow = await self.start(.GET, "/text?via=\(framework)&slow", on: service).value
            XCTAssertGreaterThanOrEqual(start.duration(to: clock.now), .milliseconds(300), "\(framework)")
            XCTAssertEqual(slow?.body, Array("hello".utf8), "\(framework)")
            let slowFlow = await finished("via=\(framework)&slow")
            XCTAssertEqual(slowFlow?.changes?.condition?.latencyMilliseconds, 300, "\(framework)")

            let runs = service.handlerRuns
            let broken = await self.start(.GET, "/text?via=\(framework)&broken", on: service).value
            XCTAssertEqual(broken?.status, 503, "\(framework): a middleware cannot drop the connection")
            XCTAssertEqual(service.handlerRuns, runs, "\(framework): no handler ran")
            let brokenFlow = await finished("via=\(framework)&broken")
            XCTAssertEqual(brokenFlow?.changes?.condition?.failure, "reset", "\(framework)")
        }
    }

    // MARK: - Breakpoints

    func testABreakpointHoldsTheRequestBeforeTheHandlerAndTheResponseBeforeTheClient() async throws {
        intercept("~u /echo")
        for framework in InboundFramework.allCases {
            let service = try await service(framework)
            let marker = "via=\(framework)"
            let runsBefore = service.handlerRuns
            let running = start(.POST, "/echo?\(marker)", on: service, body: "order=7")
            let heldFound = await hold(.request, of: marker)
            let held = try XCTUnwrap(heldFound, "\(framework): the request is held")
            XCTAssertEqual(service.handlerRuns, runsBefore, "\(framework): the handler waits")
            var edited = try XCTUnwrap(inspector.flows[held.id]).request
            XCTAssertEqual(edited.body?.data, Data("order=7".utf8), "\(framework): the person sees the body")
            edited.headers.append(HTTPHeader(name: "X-Rule", value: "edited"))
            edited.body = CapturedBody(data: Data("order=8".utf8))
            sendAsViewer(.resume(FlowResume(id: held.id, request: edited)))

            let responseFound = await hold(.response, of: marker)
            let response = try XCTUnwrap(responseFound, "\(framework): the response is held")
            var answer = try XCTUnwrap(response.response)
            XCTAssertEqual(answer.body?.data, Data("order=8".utf8), "\(framework): the handler got the edited body")
            answer.statusCode = 201
            answer.headers.append(HTTPHeader(name: "X-Edited", value: "response"))
            answer.body = CapturedBody(data: Data("edited".utf8))
            sendAsViewer(.resume(FlowResume(id: response.id, response: answer)))

            let seen = await running.value
            XCTAssertEqual(seen?.status, 201, "\(framework)")
            XCTAssertEqual(seen?.body, Array("edited".utf8), "\(framework)")
            XCTAssertEqual(seen?.field("x-edited"), "response", "\(framework)")
            XCTAssertEqual(seen?.field("x-rule"), "edited", "\(framework): the handler saw the edited request")
            let flow = await finished(marker)
            XCTAssertEqual(flow?.changes?.edited, [.request, .response], "\(framework)")
            XCTAssertEqual(flow?.changes?.originalResponse?.statusCode, 200, "\(framework)")
            XCTAssertEqual(flow?.response?.statusCode, 201, "\(framework): the log shows what the client got")
            XCTAssertEqual(flow?.request.body?.data, Data("order=8".utf8), "\(framework): and what the handler got")
        }
    }

    func testKillAtTheRequestRefusesItWithoutRunningTheHandler() async throws {
        intercept("~u /echo")
        for framework in InboundFramework.allCases {
            let service = try await service(framework)
            let marker = "via=\(framework)"
            let runsBefore = service.handlerRuns
            let running = start(.POST, "/echo?\(marker)", on: service, body: "order=7")
            let heldFound = await hold(.request, of: marker)
            let held = try XCTUnwrap(heldFound, "\(framework)")
            sendAsViewer(.kill(held.id))
            let seen = await running.value
            XCTAssertEqual(seen?.status, 503, "\(framework)")
            XCTAssertEqual(seen?.body, [], "\(framework)")
            XCTAssertEqual(service.handlerRuns, runsBefore, "\(framework): the handler never ran")
            let flow = await finished(marker)
            XCTAssertEqual(flow?.state, .cancelled, "\(framework)")
            XCTAssertEqual(flow?.error, .killedInbound, "\(framework)")
        }
    }

    func testKillAtTheResponseRefusesItInsteadOfTheHandlersAnswer() async throws {
        intercept("~u /text & ~s")
        for framework in InboundFramework.allCases {
            let service = try await service(framework)
            let marker = "via=\(framework)"
            let running = start(.GET, "/text?\(marker)", on: service)
            let heldFound = await hold(.response, of: marker)
            let held = try XCTUnwrap(heldFound, "\(framework)")
            XCTAssertEqual(held.response?.body?.data, Data("hello".utf8), "\(framework): the held response has its body")
            sendAsViewer(.kill(held.id))
            let seen = await running.value
            XCTAssertEqual(seen?.status, 503, "\(framework)")
            let flow = await finished(marker)
            XCTAssertEqual(flow?.state, .cancelled, "\(framework)")
        }
    }

    func testABreakpointTimeoutLetsTheExchangeGoOnUnchanged() async throws {
        for framework in InboundFramework.allCases {
            let plain = try await framework.start(captureInto: nil)
            let without = await start(.POST, "/echo?via=\(framework)", on: plain, body: "order=7").value
            await plain.stop()
            intercept("~u /echo")
            let service = try await service(framework)
            let with = await start(.POST, "/echo?via=\(framework)", on: service, body: "order=7").value
            intercept(nil)
            XCTAssertEqual(with, without, "\(framework): after the timeout the client sees what it sees without capture")
            XCTAssertEqual(with?.body, Array("order=7".utf8), "\(framework)")
        }
    }

    func testTheViewerGoingAwayReleasesAHeldRequest() async throws {
        // The agent may still count itself connected on the connection the
        // previous row dropped: the breakpoint filter must go to the new one.
        var dropped = 0
        for framework in InboundFramework.allCases {
            XCTAssertTrue(eventually { agent.isConnected && inspector.messagesByConnection.count > dropped }, "\(framework): a viewer is there")
            intercept("~u /echo")
            let service = try await service(framework)
            let running = start(.POST, "/echo?via=\(framework)", on: service, body: "order=7")
            let held = await hold(.request, of: "via=\(framework)")
            XCTAssertNotNil(held, "\(framework)")
            dropped = inspector.messagesByConnection.count
            inspector.dropConnections()
            let seen = await running.value
            XCTAssertEqual(seen?.status, 200, "\(framework)")
            XCTAssertEqual(seen?.body, Array("order=7".utf8), "\(framework)")
            XCTAssertEqual(agent.breakpoints.heldCount, 0, "\(framework)")
        }
    }
}

/// A service whose app did not opt in to control: whatever a viewer sends,
/// its clients see what they see without capture, and every handler runs.
final class InboundControlNotOptedInTests: AgentTestCase, @unchecked Sendable {
    func testAServiceThatDidNotOptInIsNeverChanged() async throws {
        var local = try TrafficRule(.mapLocal, spec: "|/echo|/srv/x")
        local.files = [TrafficRule.LocalFile(path: "", contentType: "text/plain", data: Data("local".utf8))]
        let viewer = inspector.latestConnection()
        let condition = try TrafficRule(.condition, spec: "||latency=300ms fail=100%:reset")
        inspector.write(ViewerMessage.rules([try TrafficRule(.modifyHeaders, spec: "/X-Rule/on"), local, condition]).frame(), toConnection: viewer)
        inspector.write(ViewerMessage.intercept("~q").frame(), toConnection: viewer)
        inspector.waitUntilRead(by: agent, connection: viewer)
        for framework in InboundFramework.allCases {
            let plain = try await framework.start(captureInto: nil)
            let captured = try await framework.start(captureInto: agent)
            let url = { (port: Int) in "http://127.0.0.1:\(port)/echo?via=\(framework)" }
            let without = try await ClientView.fetch(.POST, url(plain.port), body: Array("order=7".utf8))
            let with = try await ClientView.fetch(.POST, url(captured.port), body: Array("order=7".utf8))
            XCTAssertEqual(with, without, "\(framework)")
            XCTAssertEqual(with.field("x-rule"), "none", "\(framework)")
            XCTAssertEqual(captured.handlerRuns, 1, "\(framework)")
            await plain.stop()
            await captured.stop()
        }
        XCTAssertTrue(inspector.allMessages.allSatisfy { if case .held = $0 { false } else { true } }, "nothing was held")
    }
}

#endif
