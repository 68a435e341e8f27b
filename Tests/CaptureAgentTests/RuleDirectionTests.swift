// Built with the Hummingbird and AsyncHTTPClient traits (on by default; Package.swift).
#if Hummingbird && AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A traffic rule's filter tells a request the service received from the
/// call its handler makes: `~inbound`, `~outbound` and their negations pick
/// exactly one of the two flows of one request, as breakpoints do. A real
/// Hummingbird service whose handler calls the loopback server through a
/// captured AsyncHTTPClient, both under the same rules.
final class RuleDirectionTests: AgentTestCase, @unchecked Sendable {
    private var service: HummingbirdScenarioService!
    private var httpClient: HTTPClient!
    private let handlerRuns = RunCounter()

    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
    }

    private func startService() async throws {
        var configuration = ahcConfiguration()
        agent.capture(&configuration)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.httpClient = httpClient
        let upstream = server.url("/feature/upstream").absoluteString
        let runs = handlerRuns
        // The handler answers with what its own call got.
        service = try await HummingbirdScenarioService.start(captureInto: agent) { router in
            router.get("feature/service") { _, _ -> String in
                runs.increment()
                let response = try await httpClient.execute(HTTPClientRequest(url: upstream), timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 20)
                return "handler got \(response.status.code) \(String(buffer: body))"
            }
        }
    }

    override func tearDown() async throws {
        await service?.stop()
        try? await httpClient?.shutdown()
    }

    /// A map-local rule on `/feature` with `filter`, answering `answer`.
    private func mapLocal(_ filter: String, answer: String) throws -> TrafficRule {
        var rule = try TrafficRule(.mapLocal, spec: "|\(filter)|/feature|/srv/\(answer)")
        rule.files = [TrafficRule.LocalFile(path: "", contentType: "text/plain", data: Data(answer.utf8))]
        return rule
    }

    /// The client's request to the service, and the finished flows it made:
    /// the inbound one and, when the handler ran, its call.
    private func request(_ marker: String) async throws -> (seen: ClientView, inbound: NetworkLog?, call: NetworkLog?) {
        try await startService()
        _ = server.takeRequests()
        let seen = try await ClientView.fetch(.GET, "http://127.0.0.1:\(service.port)/feature/service?\(marker)", body: nil)
        var inbound: NetworkLog?
        _ = await waitUntil {
            inbound = inspector.flows.values.first { $0.isInbound && $0.state.isFinal && $0.request.url.contains(marker) }
            return inbound != nil
        }
        let call = inspector.flows.values.first { !$0.isInbound && $0.parentID == inbound?.id && $0.state.isFinal }
        return (seen, inbound, call)
    }

    func testAnOutboundRuleAnswersTheHandlersCallAndNotTheRequestItHandles() async throws {
        push([try mapLocal("~outbound", answer: "for calls")])
        let (seen, inbound, call) = try await request("outbound")
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "handler got 200 for calls", "the handler ran and its call was answered")
        XCTAssertEqual(server.takeRequests().count, 0, "the call never reached the network")
        XCTAssertNil(inbound?.changes, "the received request went to the handler unchanged")
        XCTAssertEqual(call?.changes?.mockedFrom, "/srv/for calls")
    }

    func testAnInboundRuleAnswersTheRequestTheServiceReceived() async throws {
        push([try mapLocal("~inbound", answer: "for received")])
        let (seen, inbound, _) = try await request("inbound")
        XCTAssertEqual(seen.status, 200)
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "for received")
        XCTAssertEqual(handlerRuns.value, 0, "the handler did not run")
        XCTAssertEqual(inbound?.changes?.mockedFrom, "/srv/for received")
    }

    func testANegatedOutboundRuleIsOneForReceivedRequests() async throws {
        push([try mapLocal("!~outbound", answer: "not a call")])
        let (seen, inbound, _) = try await request("negated")
        XCTAssertEqual(String(decoding: seen.body, as: UTF8.self), "not a call")
        XCTAssertEqual(inbound?.changes?.mockedFrom, "/srv/not a call")
    }

    func testAHeaderRuleForEachDirectionReachesItsOwnFlow() async throws {
        push([try TrafficRule(.modifyHeaders, spec: "/~inbound/X-Received/1"), try TrafficRule(.modifyHeaders, spec: "/~outbound/X-Call/1")])
        let (seen, inbound, call) = try await request("headers")
        XCTAssertEqual(seen.status, 200)
        let upstream = server.takeRequests().first?.headers.map { $0.name.lowercased() } ?? []
        XCTAssertTrue(upstream.contains("x-call"), "\(upstream)")
        XCTAssertFalse(upstream.contains("x-received"), "\(upstream)")
        XCTAssertEqual(inbound?.changes?.rules, ["modify-headers /~inbound/X-Received/1"])
        XCTAssertEqual(call?.changes?.rules, ["modify-headers /~outbound/X-Call/1"])
    }
}
#endif
