import Foundation
import NIOCore
import WireProtocol
import XCTest
@testable import CaptureAgent
#if AsyncHTTPClient
import AsyncHTTPClient
#endif

/// docs/COMPATIBILITY.md's matrix, run: every client × every real server
/// (``RealPeer``) × every control power, each cell sent without the agent
/// and with it and compared as the app sees it (status, the headers the
/// scenarios mark, the body byte for byte: httpbin echoes what reached it).
/// A cell that cannot work is declared in ``CompatibilityMatrix/limits``
/// with its reason, and the run expects exactly that.
final class RealPeerMatrixTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
        configuration.breakpointTimeout = 120
    }

    func testGunicornSyncWorkers() async throws { try await runMatrix(.gunicornSync) }
    func testGunicornKeepAlive() async throws { try await runMatrix(.gunicornKeepAlive) }
    func testUvicorn() async throws { try await runMatrix(.uvicorn) }
    func testNginx() async throws { try await runMatrix(.nginx) }
    func testHTTPServerAnsweringHTTP10() async throws { try await runMatrix(.httpServer) }

    #if AsyncHTTPClient
    /// The hold the matrix's cells cannot show: a request held on a
    /// connection the server already answered on (kept alive), which the
    /// server closes at its 2 s idle timeout while the person reads.
    /// AsyncHTTPClient's requests used to die there with
    /// `remoteConnectionClosed` while netinspect said HELD.
    func testAHeldRequestOnAKeptAliveConnectionOutlivesTheServersIdleTimeout() async throws {
        for kind in [RealPeer.Kind.gunicornKeepAlive, .uvicorn, .nginx] {
            let peer = try RealPeer(kind)
            defer { peer.stop() }
            intercept("~u held=yes & ~q")
            var configuration = HTTPClient.Configuration()
            agent.capture(&configuration)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let warm = try await client.execute(HTTPClientRequest(url: peer.url("/anything?warm=yes").absoluteString), timeout: .seconds(30))
            _ = try await warm.body.collect(upTo: 1 << 20)
            let held = Task {
                let response = try await client.execute(HTTPClientRequest(url: peer.url("/anything?held=yes").absoluteString), timeout: .seconds(60))
                return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            var hold: FlowHold?
            let found = await waitUntil {
                hold = self.inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                    guard case .held(let hold) = message, hold.phase == .request,
                          self.inspector.flows[hold.id]?.request.url.contains(":\(peer.port)/") == true else { return nil }
                    return hold
                }.first
                return hold != nil
            }
            XCTAssertTrue(found, "\(kind.rawValue): held")
            // Past the server's idle timeout, which is what this test is
            // about: no connection to the server is left for it to close.
            // (The agent lets go of it as it holds, so there is none; were
            // one kept, this waits until the server closes it at 2 s.)
            let closed = await waitUntil(timeout: 20) { !TCPSockets.anyEstablished(toPort: peer.port) }
            XCTAssertTrue(closed, "\(kind.rawValue): the server never closed the kept-alive connection")
            if let hold { sendAsViewer(.resume(FlowResume(id: hold.id))) }
            switch await held.result {
            case .success(let (status, body)):
                XCTAssertEqual(status, 200, kind.rawValue)
                XCTAssertTrue(body.contains("held=yes"), "\(kind.rawValue): the server answered the released request")
            case .failure(let error):
                XCTFail("\(kind.rawValue): the released request failed: \(error)")
            }
            intercept(nil)
            try await client.shutdown()
        }
    }
    #endif

    // MARK: - One server's rows

    private typealias Results = [ControlAdapter: String]

    private func runMatrix(_ kind: RealPeer.Kind) async throws {
        let peer = try RealPeer(kind)
        defer { peer.stop() }
        var failures: [String] = []
        for power in CompatibilityMatrix.Power.allCases where power != .serverReplay && power != .extra404 {
            let results = try await run(power, on: peer)
            failures += check(results, power: power, server: kind)
        }
        // Last: they stop the server.
        let replayed = try await runServerReplay(on: peer)
        failures += check(replayed.answered, power: .serverReplay, server: kind)
        failures += check(replayed.extra, power: .extra404, server: kind)
        XCTAssertEqual(failures, [], "\(kind.rawValue): cells that do not do what docs/COMPATIBILITY.md says")
    }

    /// "ok", or what went wrong, per client; compared with the declared limits.
    private func check(_ results: Results, power: CompatibilityMatrix.Power, server: RealPeer.Kind) -> [String] {
        ControlAdapter.allCases.compactMap { adapter in
            let expected = CompatibilityMatrix.limit(adapter, server, power) == nil ? "ok" : "fails"
            let got = results[adapter] ?? "not run"
            let outcome = got == "ok" ? "ok" : "fails"
            return outcome == expected ? nil : "\(adapter.rawValue) × \(power.rawValue): expected \(expected), got \(got)"
        }
    }

    private func request(_ peer: RealPeer, _ power: CompatibilityMatrix.Power, _ adapter: ControlAdapter) -> ScenarioRequest {
        ScenarioRequest(url: peer.url("/anything?cell=\(power.rawValue)-\(adapter.rawValue)"), headers: [("X-Probe", "1")])
    }

    /// Every client at once (a hold waits once for all), each compared with its run without the agent.
    private func run(_ power: CompatibilityMatrix.Power, on peer: RealPeer) async throws -> Results {
        var baselines: [ControlAdapter: ScenarioOutcome] = [:]
        for adapter in ControlAdapter.allCases {
            baselines[adapter] = await adapter.send(request(peer, power, adapter), agent: nil)
        }
        let local = Array(#"{"local":true}"#.utf8)
        let other = try TestHTTPServer()
        defer { other.shutdown() }
        switch power {
        case .mapLocal:
            var rule = try TrafficRule(.mapLocal, spec: "|cell=map-local|/srv/local.json")
            rule.files = [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data(local))]
            push([rule])
        case .mapRemote:
            push([try TrafficRule(.mapRemote, spec: "|127.0.0.1:\(peer.port)|127.0.0.1:\(other.port)")])
            for adapter in ControlAdapter.allCases {
                var moved = request(peer, power, adapter)
                moved.url = other.url("/anything?cell=\(power.rawValue)-\(adapter.rawValue)")
                baselines[adapter] = await adapter.send(moved, agent: nil)
            }
        case .latency: push([try TrafficRule(.condition, spec: "|~u cell=latency|latency=400ms")])
        case .failure: push([try TrafficRule(.condition, spec: "|~u cell=failure|fail=100%:reset")])
        case .hold, .edit, .kill: intercept("~u cell=\(power.rawValue) & ~q")
        case .capture, .serverReplay, .extra404: break
        }
        defer {
            push([])
            intercept(nil)
        }
        let agent = agent!
        let started = ContinuousClock.now
        let running = ControlAdapter.allCases.map { adapter in
            (adapter, Task.detached { [request = request(peer, power, adapter)] in await adapter.send(request, agent: agent) })
        }
        if [.hold, .edit, .kill].contains(power) { try await decideHolds(power, peer: peer) }
        var results: Results = [:]
        for (adapter, task) in running {
            let outcome = await task.value
            let baseline = baselines[adapter]!
            results[adapter] = switch power {
            case .capture, .hold, .mapRemote:
                outcome == baseline ? "ok" : "\(outcome) where without the agent \(baseline)"
            case .latency:
                outcome == baseline ? "ok" : "\(outcome) where without the agent \(baseline)"
            case .edit: editReached(outcome, baseline: baseline, peer: peer)
            case .mapLocal: outcome.status == 200 && outcome.body == local ? "ok" : "\(outcome)"
            case .failure, .kill: outcome.failed ? "ok" : "not failed: \(outcome)"
            case .serverReplay, .extra404: "not run"
            }
        }
        if power == .latency, ContinuousClock.now - started < .milliseconds(400) {
            results = results.mapValues { _ in "not delayed 400 ms" }
        }
        return results
    }

    /// Holds every client's request past the server's 2 s idle timeout
    /// (a person reading it), then releases it, edited or killed as `power` says.
    private func decideHolds(_ power: CompatibilityMatrix.Power, peer: RealPeer) async throws {
        var holds: [FlowHold] = []
        for adapter in ControlAdapter.allCases {
            let marker = "cell=\(power.rawValue)-\(adapter.rawValue)"
            var found: FlowHold?
            let held = await waitUntil(timeout: 20) {
                let flows = self.inspector.flows
                found = self.inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                    guard case .held(let hold) = message, hold.phase == .request, flows[hold.id]?.request.url.contains(marker) == true else { return nil }
                    return hold
                }.first
                return found != nil
            }
            XCTAssertTrue(held, "\(adapter.rawValue): never held")
            if let found { holds.append(found) }
        }
        // The time a person takes: past the peer's 2 s idle timeout, which
        // is what this test is about. The server closing every connection
        // left open to it says the time has passed (a peer that keeps none
        // alive has nothing to time out).
        if power == .hold {
            let closed = await waitUntil(timeout: 20) { !TCPSockets.anyEstablished(toPort: peer.port) }
            XCTAssertTrue(closed, "\(peer.kind.rawValue): the server never closed its idle connections")
        }
        for hold in holds {
            switch power {
            case .kill:
                sendAsViewer(.kill(hold.id))
            case .edit:
                // What netinspect's editor sends when a person adds a line:
                // the fields the client added (Host) kept as they were shown.
                var edited = try XCTUnwrap(inspector.flows[hold.id]).request
                edited.headers.append(HTTPHeader(name: "X-Edited", value: "request"))
                sendAsViewer(.resume(FlowResume(id: hold.id, request: edited)))
            default:
                sendAsViewer(.resume(FlowResume(id: hold.id)))
            }
        }
    }

    /// An edit reached the server with the client's own fields intact: httpbin
    /// echoes `X-Edited` and the `Host` the app's client sends.
    private func editReached(_ outcome: ScenarioOutcome, baseline: ScenarioOutcome, peer: RealPeer) -> String {
        guard outcome.status == baseline.status else { return "\(outcome) where without the agent \(baseline)" }
        guard peer.kind.echoes else { return outcome.body == baseline.body ? "ok" : "another body: \(outcome)" }
        let text = String(decoding: outcome.body, as: UTF8.self)
        guard text.contains(#""X-Edited": "request""#) else { return "the edit did not reach the server: \(text)" }
        guard text.contains(#""Host": "127.0.0.1:\#(peer.port)""#) else { return "Host lost: \(text)" }
        return "ok"
    }

    // MARK: - Server replay, with the server stopped

    private func runServerReplay(on peer: RealPeer) async throws -> (answered: Results, extra: Results) {
        var live: [ControlAdapter: (ScenarioOutcome, NetworkLog)] = [:]
        for adapter in ControlAdapter.allCases {
            let request = request(peer, .serverReplay, adapter)
            let outcome = await adapter.send(request, agent: agent)
            var flow: NetworkLog?
            _ = await waitUntil {
                flow = self.inspector.flows.values.first { $0.state.isFinal && $0.request.url == request.url.absoluteString }
                return flow != nil
            }
            if let flow { live[adapter] = (outcome, flow) }
        }
        peer.stop()
        XCTAssertFalse(RealPeer.connects(to: peer.port), "nothing listens where the server was")
        var options = ServerReplayOptions()
        options.extra = .notFound
        let book = ServerReplayBook(options: options, entries: live.values.compactMap { _, flow in
            guard let response = flow.response,
                  let key = ServerReplayKey(method: flow.request.method, url: flow.request.url, headers: flow.request.headers,
                                            body: flow.request.body?.data, options: options) else { return nil }
            return ServerReplayEntry(key: key, recordedID: flow.id, response: response)
        })
        sendAsViewer(.serverReplay(book))
        let taken = await waitUntil { self.agent.serverReplay.isActive }
        XCTAssertTrue(taken, "the agent took the book")
        defer { sendAsViewer(.serverReplay(nil)) }
        var answered: Results = [:]
        var extra: Results = [:]
        for adapter in ControlAdapter.allCases {
            guard let (recorded, _) = live[adapter] else { continue }
            let started = ContinuousClock.now
            let outcome = await adapter.send(request(peer, .serverReplay, adapter), agent: agent)
            let took = ContinuousClock.now - started
            answered[adapter] = outcome == recorded ? (took < .seconds(1) ? "ok" : "slow: \(took)") : "\(outcome) where recorded \(recorded)"
            let unrecorded = await adapter.send(request(peer, .extra404, adapter), agent: agent)
            extra[adapter] = unrecorded.status == 404 ? "ok" : "\(unrecorded)"
        }
        return (answered, extra)
    }
}
