import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Server replay against every adapter: a request recorded through the
/// agent is answered again from the recording after its server has gone,
/// in the app's own client, with the flow marked as replayed.
final class ServerReplayScenarioTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = !name.contains("DidNotOptIn")
    }

    /// The finished flow whose URL contains `marker` and that `extra` picks, once there is one.
    private func finished(_ marker: String, where extra: @escaping (NetworkLog) -> Bool = { _ in true }) -> NetworkLog? {
        var found: NetworkLog?
        _ = eventually {
            found = inspector.flows.values.first { $0.state.isFinal && $0.request.url.contains(marker) && extra($0) }
            return found != nil
        }
        return found
    }

    /// The book a viewer makes of `flows` (the one key function both sides use).
    private func book(_ flows: [NetworkLog], _ options: ServerReplayOptions = ServerReplayOptions()) -> ServerReplayBook {
        ServerReplayBook(options: options, entries: flows.compactMap { flow in
            guard let response = flow.response,
                  let key = ServerReplayKey(method: flow.request.method, url: flow.request.url, headers: flow.request.headers,
                                            body: flow.request.body?.data, options: options)
            else { return nil }
            return ServerReplayEntry(key: key, recordedID: flow.id, response: response)
        })
    }

    private func replay(_ book: ServerReplayBook?) {
        sendAsViewer(.serverReplay(book))
        XCTAssertTrue(eventually { agent.serverReplay.isActive == (book != nil) }, "the agent took the book")
    }

    /// Every adapter answers before any connection, with the server gone
    /// (AsyncHTTPClient through the agent's control tunnel).
    func testARecordedResponseAnswersEveryAdapterWithNothingSentToTheServer() async throws {
        for adapter in ControlAdapter.allCases {
            let origin = try TestHTTPServer()
            let recording = ScenarioRequest(method: "POST", url: origin.url("/header/x-seq?via=\(adapter.rawValue)"),
                                            headers: [("Content-Type", "text/plain"), ("X-Seq", "7")], body: Array("order=7".utf8))
            let live = await adapter.send(recording, agent: agent)
            XCTAssertEqual(live.body, Array("7".utf8), "\(adapter)")
            let recorded = try XCTUnwrap(finished("via=\(adapter.rawValue)"), "\(adapter)")
            origin.shutdown()
            _ = origin.takeRequests()
            replay(book([recorded]))

            // X-Seq is not matched on: the server would answer 8.
            var again = recording
            again.headers = [("Content-Type", "text/plain"), ("X-Seq", "8")]
            let replayed = await adapter.send(again, agent: agent)
            XCTAssertEqual(replayed, live, "\(adapter): the app sees what the server sent when it was recorded")
            XCTAssertEqual(origin.takeRequests().count, 0, "\(adapter): nothing reached the server")
            let flow = finished("via=\(adapter.rawValue)") { $0.id != recorded.id }
            XCTAssertEqual(flow?.changes?.serverReplay, ServerReplayMark(recordedID: recorded.id, left: 0), "\(adapter)")
            XCTAssertEqual(flow?.response?.body?.data, recorded.response?.body?.data, "\(adapter)")
            replay(nil)
            origin.shutdown()
        }
    }

    #if AsyncHTTPClient
    /// AsyncHTTPClient decides nothing before it has a connection: through
    /// the control tunnel it has one even where nothing listens, so a
    /// recording answers it with its server gone, and at once (it used to
    /// retry connecting until its connect timeout, then fail).
    func testAsyncHTTPClientIsAnsweredWithNothingListeningAtItsServer() async throws {
        for adapter in [ControlAdapter.ahcAsync, .ahcFuture] {
            let origin = try TestHTTPServer()
            let request = ScenarioRequest(url: origin.url("/text?gone=\(adapter.rawValue)"))
            let live = await adapter.send(request, agent: agent)
            let recorded = try XCTUnwrap(finished("gone=\(adapter.rawValue)"))
            origin.shutdown()
            replay(book([recorded]))
            let started = ContinuousClock.now
            let outcome = await adapter.send(request, agent: agent)
            XCTAssertEqual(outcome, live, "\(adapter)")
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "\(adapter): answered, not after the client's connect retries")
            replay(nil)
        }
    }
    #endif

    /// A recorded body larger than a socket's first read (70 kB, so its
    /// book's frame comes in many reads) is taken and answers as recorded.
    func testALargeRecordedBodyAnswersWhole() async throws {
        let origin = try TestHTTPServer()
        let request = ScenarioRequest(url: origin.url("/binary/70000?large"))
        let live = await ControlAdapter.urlSessionInPlace.send(request, agent: agent)
        XCTAssertEqual(live.body.count, 70_000)
        let recorded = try XCTUnwrap(finished("large"))
        origin.shutdown()
        replay(book([recorded]))
        let replayed = await ControlAdapter.urlSessionInPlace.send(request, agent: agent)
        XCTAssertEqual(replayed, live)
    }

    #if AsyncHTTPClient
    /// Two POSTs to one URL (GraphQL's way) with streamed bodies: matching
    /// sees each body whole, so each is answered with its own recording,
    /// whichever comes first (AsyncHTTPClient's were matched without their
    /// bodies: both got the first answer recorded).
    func testStreamedBodiesAreMatchedWhole() async throws {
        let origin = try TestHTTPServer()
        let queries = ["{ orders { id } }", "{ users { name } }"]
        func post(_ query: String, api: AHCAPI) async -> AHCOutcome {
            var configuration = ahcConfiguration()
            agent.capture(&configuration)
            let request = AHCRequest(method: .POST, url: origin.url("/echo?graphql=\(api)").absoluteString, body: Array(query.utf8), streamChunk: 4)
            return await performAHC(request, api: api, configuration: configuration)
        }
        for api in [AHCAPI.async, .future] {
            var recorded: [NetworkLog] = []
            for query in queries {
                let live = await post(query, api: api)
                XCTAssertEqual(live.body, Array(query.utf8), "\(api)")
                let flow = try XCTUnwrap(finished("graphql=\(api)") { flow in !recorded.contains { $0.id == flow.id } })
                recorded.append(flow)
            }
            replay(book(recorded))
            for query in queries.reversed() {
                let replayed = await post(query, api: api)
                XCTAssertEqual(String(decoding: replayed.body, as: UTF8.self), query, "\(api): answered with its own recording")
            }
            XCTAssertEqual(origin.takeRequests().count, 2, "\(api): only the live requests reached the server")
            replay(nil)
        }
        origin.shutdown()
    }
    #endif

    func testResponsesAnswerInOrderOnceEachThenTheExtraPolicy() async throws {
        let recorded = try await recordThreeAnswers()
        server.shutdown()
        var options = ServerReplayOptions()
        options.extra = .notFound
        replay(book(recorded, options))
        let adapter = ControlAdapter.urlSessionInPlace
        var bodies: [String] = []
        for _ in 0 ..< 4 {
            let outcome = await adapter.send(ScenarioRequest(url: server.url("/header/x-seq")), agent: agent)
            bodies.append(outcome.status == 200 ? String(decoding: outcome.body, as: UTF8.self) : "status \(outcome.status ?? 0)")
        }
        XCTAssertEqual(bodies, ["1", "2", "3", "status 404"], "each once, in the recorded order; then --server-replay-extra 404")
    }

    func testReuseRepeatsTheLastResponse() async throws {
        let recorded = try await recordThreeAnswers()
        server.shutdown()
        var options = ServerReplayOptions()
        options.reuse = true
        replay(book(recorded, options))
        var bodies: [String] = []
        for _ in 0 ..< 5 {
            let outcome = await ControlAdapter.urlSessionResent.send(ScenarioRequest(url: server.url("/header/x-seq")), agent: agent)
            bodies.append(String(decoding: outcome.body, as: UTF8.self))
        }
        XCTAssertEqual(bodies, ["1", "2", "3", "3", "3"])
    }

    func testAnUnmatchedRequestGoesToTheNetworkByDefault() async throws {
        let recorded = try await recordThreeAnswers()
        replay(book(recorded))
        _ = server.takeRequests()
        let outcome = await ControlAdapter.urlSessionResent.send(ScenarioRequest(url: server.url("/text?not=recorded")), agent: agent)
        XCTAssertEqual(outcome.body, TestHTTPServer.textBody)
        XCTAssertEqual(server.takeRequests().map(\.uri), ["/text?not=recorded"])
    }

    func testAnAppThatDidNotOptInIsNeverAnswered() async throws {
        let recorded = try await recordThreeAnswers()
        sendAsViewer(.serverReplay(book(recorded)))
        // The frame is sent, then a request after it; the agent must ignore the book.
        sendAsViewer(.rules([]))
        _ = server.takeRequests()
        let outcome = await ControlAdapter.urlSessionInPlace.send(ScenarioRequest(url: server.url("/header/x-seq")), agent: agent)
        XCTAssertEqual(String(decoding: outcome.body, as: UTF8.self), "none", "the server answered")
        XCTAssertEqual(server.takeRequests().count, 1)
        XCTAssertFalse(agent.serverReplay.isActive)
    }

    func testKillFailsAnUnrecordedRequestAsAConnectionResetInEveryClient() async throws {
        var options = ServerReplayOptions()
        options.extra = .kill
        replay(book([], options))
        for adapter in ControlAdapter.allCases {
            _ = server.takeRequests()
            let outcome = await adapter.send(ScenarioRequest(url: server.url("/text?via=\(adapter.rawValue)")), agent: agent)
            XCTAssertTrue(outcome.failed, "\(adapter): \(outcome)")
            XCTAssertEqual(server.takeRequests().count, 0, "\(adapter): nothing reached the server")
            let flow = finished("via=\(adapter.rawValue)")
            XCTAssertEqual(flow?.changes?.serverReplay?.extra, "kill", "\(adapter)")
            XCTAssertEqual(flow?.state, .failed, "\(adapter)")
        }
    }

    func testTimingKeepsTheRecordedWaitBeforeAnswering() async throws {
        let recorded = try await recordThreeAnswers()
        var options = ServerReplayOptions()
        options.timing = true
        var timed = book(Array(recorded.prefix(1)), options)
        timed.entries[0].wait = 0.4
        replay(timed)
        var adapters = [ControlAdapter.urlSessionResent]
        #if AsyncHTTPClient
        adapters.append(.ahcAsync)
        #endif
        for adapter in adapters {
            let started = ContinuousClock.now
            let outcome = await adapter.send(ScenarioRequest(url: server.url("/header/x-seq")), agent: agent)
            let elapsed = ContinuousClock.now - started
            XCTAssertEqual(outcome.body, Array("1".utf8), "\(adapter)")
            XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(400), "\(adapter): the recorded wait is kept")
            // A fresh book for the next client (this one's response is used).
            replay(nil)
            replay(timed)
        }
    }

    /// GET /header/x-seq three times with X-Seq 1, 2, 3: one key, three answers.
    private func recordThreeAnswers() async throws -> [NetworkLog] {
        var flows: [NetworkLog] = []
        for seq in 1 ... 3 {
            let request = ScenarioRequest(url: server.url("/header/x-seq"), headers: [("X-Seq", String(seq))])
            let outcome = await ControlAdapter.urlSessionInPlace.send(request, agent: agent)
            XCTAssertEqual(outcome.body, Array(String(seq).utf8))
            let known = Set(flows.map(\.id))
            flows.append(try XCTUnwrap(finished("/header/x-seq") { !known.contains($0.id) }))
        }
        return flows
    }
}
