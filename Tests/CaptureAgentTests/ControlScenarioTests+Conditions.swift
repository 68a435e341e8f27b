import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// The control scenario table's rows for `condition` rules, against every
/// adapter that takes them (``CaptureClient/can(_:)``): real loopback
/// servers, real clients, a real viewer socket pushing the rules. Timings
/// are lower bounds only: a condition makes a flow at least this slow.
extension ControlScenarioTests {
    private func conditioned(_ path: String, _ adapter: ControlAdapter, _ tag: String, method: String = "POST",
                         body: [UInt8]? = Array("order=7".utf8)) -> ScenarioRequest {
        ScenarioRequest(method: method, url: server.url("\(path)?via=\(adapter.rawValue)&\(tag)"),
                        headers: [("Content-Type", "text/plain")], body: body)
    }

    /// The finished flow whose URL contains both parts, once there is one.
    private func finishedFlow(_ adapter: ControlAdapter, _ tag: String) -> NetworkLog? {
        var found: NetworkLog?
        _ = eventually {
            found = inspector.flows.values.first {
                $0.state.isFinal && $0.request.url.contains("via=\(adapter.rawValue)&\(tag)")
            }
            return found != nil
        }
        return found
    }

    private func timed(_ body: () async -> ScenarioOutcome) async -> (ScenarioOutcome, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = await body()
        return (outcome, start.duration(to: clock.now))
    }

    func testLatencyDelaysOnlyMatchingRequestsForEveryAdapter() async throws {
        push([try TrafficRule(.condition, spec: "|~u slow=yes|latency=400ms")])
        for adapter in ControlAdapter.allCases where adapter.client.can(.condition) {
            let (slow, elapsed) = await timed { await adapter.send(conditioned("/echo", adapter, "slow=yes"), agent: agent) }
            XCTAssertEqual(slow.status, 200, "\(adapter): \(slow)")
            XCTAssertEqual(slow.body, Array("order=7".utf8), "\(adapter)")
            XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(400), "\(adapter)")
            let flow = finishedFlow(adapter, "slow=yes")
            XCTAssertEqual(flow?.changes?.condition?.latencyMilliseconds, 400, "\(adapter): the flow says what was done")
            XCTAssertGreaterThanOrEqual(flow?.timing.duration ?? 0, 0.4, "\(adapter): the flow's time is the app's")

            let fast = await adapter.send(conditioned("/echo", adapter, "slow=no"), agent: agent)
            XCTAssertEqual(fast.status, 200, "\(adapter)")
            XCTAssertNil(finishedFlow(adapter, "slow=no")?.changes, "\(adapter): a request the filter does not match is left alone")
        }
    }

    /// What each client reports for a reset and a timeout of a real transfer.
    private func expectedError(_ failure: String, _ adapter: ControlAdapter) -> String {
        switch (failure, adapter.client) {
        case ("reset", .urlSession), ("reset", .openAPI): "NSURLErrorDomain -1005"
        case ("timeout", .urlSession), ("timeout", .openAPI): "NSURLErrorDomain -1001"
        case ("reset", _): "IOError: read(descriptor:pointer:size:): Connection reset by peer"
        default: "HTTPClientError: HTTPClientError.readTimeout"
        }
    }

    func testFailuresReachTheAppAsItsClientsOwnErrorsWhileOthersSucceedForEveryAdapter() async throws {
        push([try TrafficRule(.condition, spec: "|~u fail=reset|fail=100%:reset"),
              try TrafficRule(.condition, spec: "|~u fail=timeout|fail=100%:timeout"),
              try TrafficRule(.condition, spec: "|~u fail=503|fail=100%:503")])
        for adapter in ControlAdapter.allCases where adapter.client.can(.condition) {
            _ = server.takeRequests()
            for failure in ["reset", "timeout"] {
                let outcome = await adapter.send(conditioned("/echo", adapter, "fail=\(failure)"), agent: agent)
                XCTAssertTrue(outcome.failed, "\(adapter) \(failure): \(outcome)")
                XCTAssertTrue(outcome.error?.hasPrefix(expectedError(failure, adapter)) == true, "\(adapter) \(failure): \(outcome)")
                let flow = finishedFlow(adapter, "fail=\(failure)")
                XCTAssertEqual(flow?.state, .failed, "\(adapter) \(failure)")
                XCTAssertEqual(flow?.changes?.condition?.failure, failure, "\(adapter) \(failure)")
            }
            let status = await adapter.send(conditioned("/echo", adapter, "fail=503"), agent: agent)
            XCTAssertEqual(status.status, 503, "\(adapter): \(status)")
            XCTAssertEqual(status.body, [], "\(adapter): an empty body")
            XCTAssertEqual(finishedFlow(adapter, "fail=503")?.changes?.condition?.failure, "503", "\(adapter)")
            XCTAssertEqual(server.takeRequests().count, 0, "\(adapter): no failed request reached the server")

            let other = await adapter.send(conditioned("/echo", adapter, "fail=none"), agent: agent)
            XCTAssertEqual(other.status, 200, "\(adapter): \(other)")
            XCTAssertEqual(other.body, Array("order=7".utf8), "\(adapter)")
        }
    }

    func testTheSameSeedFailsTheSameRequestsInTwoRunsForEveryAdapter() async throws {
        let rule = try TrafficRule(.condition, spec: "|~u seeded|fail=50%:reset seed=7")
        for adapter in ControlAdapter.allCases where adapter.client.can(.condition) {
            var runs: [[Bool]] = []
            for run in 0..<2 {
                // A new push is a new run: the rule's generator starts again from its seed.
                push([])
                push([rule])
                var failed: [Bool] = []
                for index in 0..<12 {
                    failed.append(await adapter.send(conditioned("/echo", adapter, "seeded&run=\(run)&n=\(index)"), agent: agent).failed)
                }
                runs.append(failed)
            }
            XCTAssertEqual(runs[0], runs[1], "\(adapter)")
            XCTAssertTrue(runs[0].contains(true) && runs[0].contains(false), "\(adapter): some fail, some pass: \(runs[0])")
        }
    }

    func testAPacedResponseBodyTakesAtLeastNineTenthsOfItsIdealTimeForEveryAdapter() async throws {
        // A mebibyte at 8 Mbit/s (Firefox's 1024-based units): one second.
        push([try TrafficRule(.condition, spec: "|~u paced|down=8mbit")])
        for adapter in ControlAdapter.allCases where adapter.client.can(.pacing) {
            let (outcome, elapsed) = await timed {
                await adapter.send(conditioned("/binary/1048576", adapter, "paced", method: "GET", body: nil), agent: agent)
            }
            XCTAssertEqual(outcome.status, 200, "\(adapter): \(outcome)")
            XCTAssertEqual(outcome.body, TestHTTPServer.pattern(count: 1 << 20), "\(adapter): the body arrives whole")
            XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(900), "\(adapter)")
            let flow = finishedFlow(adapter, "paced")
            XCTAssertEqual(flow?.changes?.condition?.downBitsPerSecond, 8 << 20, "\(adapter)")
            if let flow, let first = flow.timing.firstResponseByte, let end = flow.timing.finished {
                print("pacing \(adapter): 1 MiB at 8 Mbit/s: \(elapsed) for the app's call, \(end - first) s from the first response byte (ideal 1 s)")
            }
        }
    }

    func testAPacedUploadTakesAtLeastNineTenthsOfItsIdealTimeForEveryAdapterThatPacesIt() async throws {
        push([try TrafficRule(.condition, spec: "|~u paced-up|up=8mbit")])
        let body = TestHTTPServer.pattern(count: 1 << 20)
        // corelibs reads a request body on its own thread, which a pace could only block (docs/AGENT.md).
        for adapter in ControlAdapter.allCases where adapter.client.can(.condition) && adapter.client != .urlSession {
            let (outcome, elapsed) = await timed { await adapter.send(conditioned("/echo", adapter, "paced-up", body: body), agent: agent) }
            XCTAssertEqual(outcome.status, 200, "\(adapter): \(outcome)")
            XCTAssertEqual(outcome.body, body, "\(adapter): the server got the whole body")
            XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(900), "\(adapter)")
            print("upload pacing \(adapter): 1 MiB at 8 Mbit/s took \(elapsed) (ideal 1 s)")
        }
    }
}

extension ControlScenarioTests {
    /// A condition's reset is the error the same client gives when a real
    /// server resets the connection: a loopback server that answers with a
    /// TCP reset (`SO_LINGER` 0), without a condition, is the reference.
    /// The OpenAPI middleware is left out: it stands in front of whatever
    /// transport the app chose and throws URLSession's error, whatever the
    /// transport (docs/AGENT.md).
    func testAConditionsResetIsTheErrorARealResetGivesForEveryAdapter() async throws {
        push([try TrafficRule(.condition, spec: "|~u conditioned|fail=100%:reset")])
        for adapter in ControlAdapter.allCases where adapter.client.can(.condition) && adapter.client != .openAPI {
            let real = await adapter.send(conditioned("/reset", adapter, "real"), agent: agent)
            let conditioned = await adapter.send(conditioned("/echo", adapter, "conditioned"), agent: agent)
            XCTAssertNotNil(real.error, "\(adapter): the server's reset fails the request: \(real)")
            XCTAssertEqual(conditioned.error, real.error, "\(adapter)")
        }
    }
}

extension ControlScenarioTests {
    /// A request the app gives up on while a condition makes it wait stops
    /// waiting: its flow ends as cancelled long before the ten minutes.
    func testACancelledRequestStopsWaitingForTheConditionsLatency() async throws {
        push([try TrafficRule(.condition, spec: "|~u waits|latency=600s")])

        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let ended = Locked<Int?>(nil)
        let task = session.dataTask(with: server.url("/text?waits&client=urlsession")) { _, _, error in
            ended.withLock { $0 = (error as? URLError)?.code.rawValue ?? 0 }
        }
        task.resume()
        XCTAssertTrue(eventually { server.requests.contains { $0.uri.contains("client=urlsession") } }, "the request went out")
        task.cancel()
        XCTAssertTrue(eventually { ended.current != nil })
        XCTAssertEqual(ended.current, URLError.cancelled.rawValue)
        XCTAssertTrue(eventually { inspector.flows.values.contains { $0.request.url.contains("client=urlsession") && $0.state == .cancelled } },
                      "URLSession: the flow ends as cancelled")

        #if AsyncHTTPClient
        var ahc = ahcConfiguration()
        agent.capture(&ahc)
        let outcome = await performAHC(AHCRequest(url: server.url("/text?waits&client=ahc").absoluteString), api: .async,
                                       configuration: ahc, timeout: .milliseconds(300))
        XCTAssertNotNil(outcome.error, "AsyncHTTPClient: the deadline ends the request")
        XCTAssertTrue(eventually { inspector.flows.values.contains { $0.request.url.contains("client=ahc") && $0.state.isFinal } },
                      "AsyncHTTPClient: the flow ends")
        #endif
    }
}
