// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// AsyncHTTPClient against the real loopback server, each scenario run
/// without and then with `agent.capture(&configuration)`: the app must see
/// the same thing, the server must receive the same requests, and the log
/// must tell what the server received and the app got.
final class AsyncHTTPClientCaptureTests: AgentTestCase, @unchecked Sendable {
    struct Run {
        var outcome: AHCOutcome
        var requests: [ReceivedRequest]
        /// The finished AsyncHTTPClient flows of the captured run, in start order.
        var flows: [NetworkLog]
    }

    /// Runs `request` without and with capture and compares them; returns
    /// the captured run with its flows (waits for `flows` of them).
    @discardableResult
    func compare(
        _ request: AHCRequest,
        api: AHCAPI,
        configuration: HTTPClient.Configuration = ahcConfiguration(),
        reading: BodyReading = .whole,
        timeout: TimeAmount = .seconds(30),
        flows expectedFlows: Int? = nil,
        takeRequests: @escaping () -> [ReceivedRequest] = { [] },
        file: StaticString = #filePath,
        line: UInt = #line
    ) async -> Run {
        // What an exchange the app gave up on still sends is received whole or dropped first.
        let take: () -> [ReceivedRequest] = { [server] in server!.takeRequestsOnceArrived() + takeRequests() }
        _ = take()
        let plain = await performAHC(request, api: api, configuration: configuration, reading: reading, timeout: timeout)
        let plainRequests = take()

        let before = Set(inspector.flows.keys)
        var captured = configuration
        agent.capture(&captured)
        let outcome = await performAHC(request, api: api, configuration: captured, reading: reading, timeout: timeout)
        let requests = take()

        XCTAssertEqual(outcome, plain, "the app saw something else with capture (\(api))", file: file, line: line)
        XCTAssertEqual(requests, plainRequests, "the server saw something else with capture (\(api))", file: file, line: line)
        let wanted = expectedFlows ?? max(1, requests.count)
        var flows: [NetworkLog] = []
        let arrived = eventually {
            flows = inspector.flows.values
                .filter { !before.contains($0.id) && $0.state.isFinal && $0.source?.client == .asyncHTTPClient }
                .sorted { $0.timing.startedAt < $1.timing.startedAt }
            return flows.count >= wanted
        }
        XCTAssertTrue(arrived, "\(flows.count) finished flows, expected \(wanted)", file: file, line: line)
        XCTAssertEqual(flows.count, wanted, "\(flows.map { "\($0.request.method) \($0.request.url) \($0.state)" })", file: file, line: line)
        return Run(outcome: outcome, requests: requests, flows: flows)
    }

    /// Each flow is what the server received, in order: method, URI, every
    /// header field on the wire, the body (up to the cap).
    func assertFlowsMatchServer(_ run: Run, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(run.flows.count, run.requests.count, "one flow per request the server received", file: file, line: line)
        for (flow, sent) in zip(run.flows, run.requests) {
            XCTAssertEqual(flow.request.method, sent.method, file: file, line: line)
            XCTAssertTrue(flow.request.url.hasSuffix(sent.uri), "\(flow.request.url) vs \(sent.uri)", file: file, line: line)
            XCTAssertEqual(flow.sentFieldSet, sent.fieldSet, "header fields on the wire", file: file, line: line)
            let body = flow.request.body ?? CapturedBody(data: Data())
            XCTAssertEqual(body.size, sent.body.count, "request body size", file: file, line: line)
            XCTAssertEqual(body.data, Data(sent.body.prefix(agent.configuration.bodyCaptureLimit)), "request body", file: file, line: line)
            XCTAssertEqual(flow.source, CaptureSource(client: .asyncHTTPClient, path: .wire), file: file, line: line)
            let timing = flow.timing
            XCTAssertNotNil(timing.requestSent, file: file, line: line)
            XCTAssertNotNil(timing.finished, file: file, line: line)
            if let sentAt = timing.requestSent, let head = timing.firstResponseByte, let end = timing.finished {
                XCTAssertLessThanOrEqual(sentAt, head, file: file, line: line)
                XCTAssertLessThanOrEqual(head, end, file: file, line: line)
                // The phases the handlers measured add up to the flow.
                let phases = timing.phases
                XCTAssertEqual(phases?.source, "AsyncHTTPClient", file: file, line: line)
                XCTAssertEqual(phases?.send ?? -1, sentAt, accuracy: 1e-9, file: file, line: line)
                XCTAssertEqual((phases?.send ?? 0) + (phases?.wait ?? 0) + (phases?.receive ?? 0), end, accuracy: 1e-6, file: file, line: line)
            }
        }
    }

    /// The last flow holds the response the app got: status, fields, body.
    func assertFinalResponse(_ run: Run, decoded: Bool = false, file: StaticString = #filePath, line: UInt = #line) {
        guard let flow = run.flows.last, let response = flow.response else { return XCTFail("no response logged", file: file, line: line) }
        XCTAssertEqual(flow.state, .completed, file: file, line: line)
        XCTAssertEqual(response.statusCode, run.outcome.status, file: file, line: line)
        let logged = response.headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name): \($0.value)" }
        XCTAssertEqual(logged, run.outcome.headers, "response header fields, in order", file: file, line: line)
        let body = response.body ?? CapturedBody(data: Data())
        XCTAssertEqual(body.size, run.outcome.body.count, "response body size", file: file, line: line)
        XCTAssertEqual(body.data, Data(run.outcome.body.prefix(agent.configuration.bodyCaptureLimit)), "response body", file: file, line: line)
        XCTAssertEqual(body.isDecoded, decoded, file: file, line: line)
    }

    // MARK: - Plain exchanges, both APIs

    func testGETBothAPIs() async throws {
        for api in AHCAPI.allCases {
            let run = await compare(AHCRequest(url: server.url("/text?api=\(api)").absoluteString, headers: [("X-Trace", "1")]), api: api)
            XCTAssertEqual(run.outcome.status, 200)
            assertFlowsMatchServer(run)
            assertFinalResponse(run)
            let flow = try XCTUnwrap(run.flows.first)
            XCTAssertEqual(flow.request.headers, [HTTPHeader(name: "X-Trace", value: "1")], "the app's own fields")
            XCTAssertEqual(flow.request.clientHeaders.map { $0.name.lowercased() }, ["host"], "what AsyncHTTPClient added")
            // Only the async API's tracer knows when the request began waiting for a connection.
            if api == .async {
                XCTAssertNotNil(flow.timing.phases?.blocked, "the async request's wait for its connection")
            } else {
                XCTAssertNil(flow.timing.phases?.blocked)
            }
        }
    }

    func testPOSTWithABodyBothAPIs() async throws {
        let body = Array((0 ..< 5000).map { UInt8(truncatingIfNeeded: $0) })
        for api in AHCAPI.allCases {
            let run = await compare(AHCRequest(method: .POST, url: server.url("/echo?api=\(api)").absoluteString,
                                               headers: [("Content-Type", "application/octet-stream")], body: body), api: api)
            XCTAssertEqual(run.outcome.body, body)
            assertFlowsMatchServer(run)
            assertFinalResponse(run)
            XCTAssertEqual(run.flows.first?.request.clientHeaders.map { $0.name.lowercased() }.sorted(), ["content-length", "host"])
        }
    }

    func testStreamedRequestBodyBothAPIs() async throws {
        let body = TestHTTPServer.pattern(count: 300_000)
        for api in AHCAPI.allCases {
            let run = await compare(AHCRequest(method: .PUT, url: server.url("/echo?streamed=\(api)").absoluteString,
                                               body: body, streamChunk: 16 * 1024), api: api)
            XCTAssertEqual(run.outcome.body, body)
            assertFlowsMatchServer(run)
            assertFinalResponse(run)
            XCTAssertTrue(run.flows.first?.request.clientHeaders.contains { $0.name.lowercased() == "transfer-encoding" } ?? false)
        }
    }

    func testStreamedResponseReadSlowly() async throws {
        let run = await compare(AHCRequest(url: server.url("/drip/20").absoluteString), api: .async, reading: .slowly(pause: .milliseconds(30)))
        XCTAssertEqual(run.outcome.body.count, 20 * 1024)
        assertFlowsMatchServer(run)
        assertFinalResponse(run)
        let timing = try XCTUnwrap(run.flows.first?.timing)
        XCTAssertGreaterThan((timing.finished ?? 0) - (timing.firstResponseByte ?? 0), 0.5, "the body took the server's 50 ms per chunk")
    }

    func testBodyOverTheCaptureLimitIsCutInTheLogOnly() async throws {
        agent.stop()
        agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) { $0.bodyCaptureLimit = 1000 })
        XCTAssertTrue(eventually { agent.isConnected })
        let body = TestHTTPServer.pattern(count: 4000)
        let run = await compare(AHCRequest(method: .POST, url: server.url("/echo?cap").absoluteString, body: body), api: .async)
        assertFlowsMatchServer(run)
        assertFinalResponse(run)
        XCTAssertEqual(run.flows.first?.response?.body?.isTruncated, true)
        XCTAssertEqual(run.flows.first?.request.body?.isTruncated, true)
    }

    // MARK: - Redirects

    func testRedirectsEachHopAFlowChainedOnTheLast() async throws {
        let cases: [(status: Int, method: HTTPMethod, followedAs: String)] = [(301, .GET, "GET"), (302, .POST, "GET"), (307, .POST, "POST")]
        for api in AHCAPI.allCases {
            for (status, method, followedAs) in cases {
                let body: [UInt8]? = method == .POST ? Array("redirected body".utf8) : nil
                let run = await compare(AHCRequest(method: method, url: server.url("/redirect/\(status)?to=/echo").absoluteString, body: body), api: api)
                XCTAssertEqual(run.requests.map(\.method), [method.rawValue, followedAs], "\(api) \(status)")
                assertFlowsMatchServer(run)
                assertFinalResponse(run)
                let (first, last) = (run.flows[0], run.flows[1])
                XCTAssertEqual(first.response?.statusCode, status)
                XCTAssertEqual(first.state, .completed)
                XCTAssertEqual(first.response?.headers.first { $0.name.lowercased() == "location" }?.value, "/echo")
                XCTAssertEqual(last.redirects, [RedirectHop(statusCode: status, from: first.request.url, to: server.url("/echo").absoluteString)],
                               "\(api) \(status)")
            }
        }
    }

    // MARK: - Content coding

    func testGzipWithDecompressionOnAndOff() async throws {
        for api in AHCAPI.allCases {
            let off = await compare(AHCRequest(url: server.url("/gzip?off=\(api)").absoluteString), api: api, configuration: ahcConfiguration(decompression: false))
            XCTAssertEqual(off.outcome.body, TestHTTPServer.gzipBody, "without decompression the app gets the gzip bytes")
            assertFlowsMatchServer(off)
            assertFinalResponse(off, decoded: false)
            XCTAssertFalse(off.flows[0].request.clientHeaders.contains { $0.name.lowercased() == "accept-encoding" })

            let on = await compare(AHCRequest(url: server.url("/gzip?on=\(api)").absoluteString), api: api, configuration: ahcConfiguration(decompression: true))
            XCTAssertEqual(on.outcome.body, TestHTTPServer.gzipPlain, "with decompression the app gets the text")
            assertFlowsMatchServer(on)
            assertFinalResponse(on, decoded: true)
            XCTAssertEqual(on.flows[0].request.clientHeaders.first { $0.name.lowercased() == "accept-encoding" }?.value, "deflate, gzip")

            // The app's own Accept-Encoding stays the app's.
            let own = await compare(AHCRequest(url: server.url("/gzip?own=\(api)").absoluteString, headers: [("Accept-Encoding", "gzip")]),
                                    api: api, configuration: ahcConfiguration(decompression: true))
            assertFlowsMatchServer(own)
            XCTAssertEqual(own.flows[0].request.headers, [HTTPHeader(name: "Accept-Encoding", value: "gzip")])
        }
    }

    // MARK: - Error statuses

    func testNotFoundAndServerErrorBothAPIs() async throws {
        for api in AHCAPI.allCases {
            for status in [404, 500] {
                let run = await compare(AHCRequest(url: server.url("/status/\(status)?\(api)").absoluteString), api: api)
                XCTAssertEqual(run.outcome.status, status)
                assertFlowsMatchServer(run)
                assertFinalResponse(run)
            }
        }
    }

    // MARK: - Failures

    /// A port nobody listens on: the async API's request never gets a
    /// connection, and the tracer reports it as a failed flow. The future
    /// API's tracing starts only on a connection: nothing is logged (docs/AGENT.md).
    func testRefusedConnection() async throws {
        let closed = try TestHTTPServer()
        let url = closed.url("/refused").absoluteString
        closed.shutdown()
        var configuration = ahcConfiguration()
        configuration.timeout.connect = .milliseconds(500)

        let run = await compare(AHCRequest(url: url), api: .async, configuration: configuration, flows: 1)
        XCTAssertNotNil(run.outcome.error)
        let flow = try XCTUnwrap(run.flows.first)
        XCTAssertEqual(flow.state, .failed)
        XCTAssertEqual(flow.request.url, url)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertNil(flow.response)
        XCTAssertEqual(flow.source?.client, .asyncHTTPClient)
        XCTAssertEqual(flow.source?.path?.rawValue, "tracer")
        XCTAssertEqual(flow.error?.message, run.outcome.error.map { String($0.drop { $0 != ":" }.dropFirst(2)) }, "the error the app got")

        // The method too comes from the span's attributes (GET is the default).
        let delete = await compare(AHCRequest(method: .DELETE, url: url + "?delete"), api: .async, configuration: configuration, flows: 1)
        XCTAssertEqual(delete.flows.first?.request.method, "DELETE")
        XCTAssertEqual(delete.flows.first?.request.url, url + "?delete")

        // The future-based API: the same for the app, no flow at all.
        let before = inspector.flows.count
        let plain = await performAHC(AHCRequest(url: url), api: .future, configuration: configuration)
        var captured = configuration
        agent.capture(&captured)
        let outcome = await performAHC(AHCRequest(url: url), api: .future, configuration: captured)
        XCTAssertEqual(outcome, plain)
        XCTAssertNotNil(outcome.error)
        // A flow of the refused request would have been sent before the one
        // of a request the app makes after it, through the same agent.
        let later = server.url("/text?after-the-future").absoluteString
        _ = await performAHC(AHCRequest(url: later), api: .async, configuration: captured)
        XCTAssertTrue(eventually { self.inspector.finishedFlows(urlSuffix: "/text?after-the-future").count == 1 })
        XCTAssertEqual(inspector.flows.count, before + 1, "a refused execute(request:) is not seen: no span, no connection")
    }

    /// A URL AsyncHTTPClient refuses as it prepares the request (a scheme
    /// it does not speak), after it set the span's attributes: no
    /// connection carries it, and the tracer logs it as a failed flow of its own.
    func testAnUnsupportedSchemeFailsAsAFlowOfItsOwn() async throws {
        let url = "ftp://127.0.0.1:1/file?unsupported"
        let run = await compare(AHCRequest(url: url), api: .async, flows: 1)
        XCTAssertNotNil(run.outcome.error)
        let flow = try XCTUnwrap(run.flows.first)
        XCTAssertEqual(flow.state, .failed)
        XCTAssertEqual(flow.request.url, url)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.source?.path?.rawValue, "tracer")
        XCTAssertEqual(flow.error?.message, run.outcome.error.map { String($0.drop { $0 != ":" }.dropFirst(2)) }, "the error the app got")
    }

    func testReadTimeoutBothAPIs() async throws {
        for api in AHCAPI.allCases {
            let run = await compare(AHCRequest(url: server.url("/slow/2000?\(api)").absoluteString), api: api,
                                    configuration: ahcConfiguration(readTimeout: .milliseconds(300)))
            XCTAssertEqual(run.outcome.error, "HTTPClientError: HTTPClientError.readTimeout")
            let flow = try XCTUnwrap(run.flows.first)
            XCTAssertEqual(flow.request.url, server.url("/slow/2000?\(api)").absoluteString)
            XCTAssertNil(flow.response)
            switch api {
            case .async:
                // The tracer hands over the real reason.
                XCTAssertEqual(flow.state, .failed)
                XCTAssertEqual(flow.error?.message, "HTTPClientError.readTimeout")
            case .future:
                // Only the connection is seen: AsyncHTTPClient closed it.
                XCTAssertEqual(flow.state, .cancelled)
                XCTAssertEqual(flow.error?.domain, "AsyncHTTPClient")
            }
        }
    }

    func testCancellationMidBody() async throws {
        let run = await compare(AHCRequest(url: server.url("/drip/100").absoluteString), api: .async, reading: .cancelAfter(bytes: 3 * 1024))
        XCTAssertNotNil(run.outcome.error, "the app's task was cancelled")
        let flow = try XCTUnwrap(run.flows.first)
        XCTAssertEqual(flow.state, .cancelled)
        XCTAssertEqual(flow.response?.statusCode, 200)
        let size = flow.response?.body?.size ?? 0
        XCTAssertGreaterThanOrEqual(size, 3 * 1024)
        XCTAssertLessThan(size, 100 * 1024, "cut off, not the whole body")
    }

    // MARK: - Configuration applies

    func testExcludedURLsAreNotCapturedAndCredentialsAreRedacted() async throws {
        agent.stop()
        agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.excludedURLs = ["*/status/*"]
            $0.redactedQueryItems = ["token"]
            $0.redactedHeaders.insert("X-Api-Key")
        })
        XCTAssertTrue(eventually { agent.isConnected })
        let excluded = await compare(AHCRequest(url: server.url("/status/204").absoluteString), api: .async, flows: 0)
        XCTAssertTrue(excluded.flows.isEmpty)

        let run = await compare(AHCRequest(url: server.url("/text?token=secret&x=1").absoluteString, headers: [("X-Api-Key", "k1"), ("Authorization", "Bearer b")]),
                                api: .future)
        let flow = try XCTUnwrap(run.flows.first)
        XCTAssertEqual(flow.request.url, server.url("/text?token=%3Credacted%3E&x=1").absoluteString)
        XCTAssertEqual(flow.request.headers, [HTTPHeader(name: "X-Api-Key", value: "<redacted>"), HTTPHeader(name: "Authorization", value: "<redacted>")])
        XCTAssertEqual(run.requests.first?.headers.first { $0.name == "X-Api-Key" }?.value, "k1", "the server got the real value")

        // Credentials in a URL: AsyncHTTPClient never sends them, and the log never shows them.
        let url = "http://user:pass@127.0.0.1:\(server.port)/text"
        let auth = await compare(AHCRequest(url: url), api: .async)
        XCTAssertEqual(auth.requests.first?.headers.contains { $0.name.lowercased() == "authorization" }, false)
        XCTAssertEqual(auth.flows[0].request.url, server.url("/text").absoluteString)
    }

    /// The shared recording redacts `user:password@` for every client (URLSession keeps them in the URL).
    func testCredentialsInURLsAreRedactedInTheSharedRecording() throws {
        let configuration = CaptureAgent.Configuration()
        XCTAssertEqual(configuration.redacting(URL(string: "http://user:pw@127.0.0.1:8080/x?y=1")!), "http://%3Credacted%3E@127.0.0.1:8080/x?y=1")
        XCTAssertEqual(configuration.redacting(URL(string: "https://key@example.com/")!), "https://%3Credacted%3E@example.com/")
        XCTAssertEqual(configuration.redacting(URL(string: "https://example.com/a")!), "https://example.com/a")
        let recorder = FlowRecorder(method: "GET", url: "http://u:secret@h/p", headers: [], sessionID: 1, taskID: 1,
                                    configuration: configuration, clock: .system)
        guard case .flowStarted(let log) = recorder.started() else { return XCTFail("not a flowStarted") }
        XCTAssertFalse(log.request.url.contains("secret"))
    }

    func testAppsOwnDebugInitializerAndTracerStillRun() async throws {
        let initialized = Locked(0)
        var configuration = ahcConfiguration()
        configuration.http1_1ConnectionDebugInitializer = { channel in
            initialized.withLock { $0 += 1 }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        let run = await compare(AHCRequest(url: server.url("/text?chained").absoluteString), api: .async, configuration: configuration)
        XCTAssertEqual(initialized.current, 2, "the app's initializer ran for the plain and the captured client")
        assertFlowsMatchServer(run)
    }

    // MARK: - TLS, HTTP/1.1 and HTTP/2

    func testTLSOverHTTP1AndHTTP2() async throws {
        for http2 in [false, true] {
            let tlsServer = try TLSTestServer(http2: http2)
            defer { tlsServer.shutdown() }
            for api in AHCAPI.allCases {
                let configuration = ahcConfiguration(tls: true, http2: http2)
                let get = await compare(AHCRequest(url: tlsServer.url("/text?h2=\(http2)&\(api)"), headers: [("X-Trace", "1")]), api: api,
                                        configuration: configuration, takeRequests: tlsServer.takeRequestsOnceArrived)
                XCTAssertEqual(get.outcome.status, 200, "\(get.outcome)")
                XCTAssertEqual(get.outcome.version, http2 ? "HTTP/2.0" : "HTTP/1.1")
                assertFlowsMatchServer(get)
                assertFinalResponse(get)
                XCTAssertTrue(get.flows[0].request.url.hasPrefix("https://"))

                let body = TestHTTPServer.pattern(count: 70_000)
                let post = await compare(AHCRequest(method: .POST, url: tlsServer.url("/echo?h2=\(http2)&\(api)"), body: body), api: api,
                                         configuration: configuration, takeRequests: tlsServer.takeRequestsOnceArrived)
                XCTAssertEqual(post.outcome.body, body)
                assertFlowsMatchServer(post)
                assertFinalResponse(post)
            }
        }
    }

    // MARK: - Back-pressure

    /// A 200 MB response streamed through a captured client, read chunk by
    /// chunk and checked against the pattern: the app gets every byte, the
    /// log keeps the cap and the full size, and the process grows no more
    /// than without capture (AsyncHTTPClient's back-pressure is untouched:
    /// the handlers keep no more than the capped copy).
    func testA200MBResponseKeepsTheAppsMemoryBound() async throws {
        let length = 200 * 1024 * 1024
        let url = server.url("/stream/\(length)").absoluteString
        let period = TestHTTPServer.pattern(count: 1 << 16)

        func transfer(captured: Bool) async throws -> (bytes: Int, mismatches: Int, growth: Int, seconds: Double) {
            var configuration = ahcConfiguration()
            if captured { agent.capture(&configuration) }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            releaseFreedMemory()
            let baseline = residentBytes()
            let peak = Locked(baseline)
            let sampling = Locked(true)
            let sampler = Thread {
                while sampling.current {
                    let now = residentBytes()
                    peak.withLock { $0 = max($0, now) }
                    paceThread(.milliseconds(5))
                }
            }
            sampler.start()
            let started = Date()
            var bytes = 0
            var mismatches = 0
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
            for try await chunk in response.body {
                chunk.withUnsafeReadableBytes { buffer in
                    // Segment by segment against the 64 KiB period (memcmp: a debug build is slow per byte).
                    var offset = 0
                    while offset < buffer.count {
                        let phase = (bytes + offset) & 0xFFFF
                        let count = min(buffer.count - offset, period.count - phase)
                        let same = period.withUnsafeBytes { memcmp(buffer.baseAddress! + offset, $0.baseAddress! + phase, count) == 0 }
                        if !same { mismatches += 1 }
                        offset += count
                    }
                }
                bytes += chunk.readableBytes
            }
            let seconds = Date().timeIntervalSince(started)
            sampling.withLock { $0 = false }
            try await client.shutdown()
            return (bytes, mismatches, peak.current - baseline, seconds)
        }

        let plain = try await transfer(captured: false)
        XCTAssertEqual(plain.bytes, length)
        let captured = try await transfer(captured: true)
        XCTAssertEqual(captured.bytes, length, "every byte")
        XCTAssertEqual(captured.mismatches, 0, "every byte the one the server sent, in order")

        var log: NetworkLog?
        XCTAssertTrue(eventually(timeout: 20) { log = inspector.finishedFlows(urlSuffix: "/stream/\(length)").first; return log != nil })
        let body = try XCTUnwrap(log?.response?.body)
        let limit = agent.configuration.bodyCaptureLimit
        XCTAssertEqual(body.size, length)
        XCTAssertTrue(body.isTruncated)
        XCTAssertEqual(body.data, Data(TestHTTPServer.pattern(count: limit)))
        let statistics = agent.statistics
        XCTAssertLessThanOrEqual(statistics.peakQueuedBytes, 1024 + (limit + 2) / 3 * 4 + 64 * 1024, "the queue holds the capped body, not the response")
        print(String(format: "AsyncHTTPClient 200 MB: %.1f s captured, %.1f s plain; resident +%d MiB captured, +%d MiB plain",
                     captured.seconds, plain.seconds, captured.growth >> 20, plain.growth >> 20))
        // The capped copy (4 MiB) and its event (base64) are what capture adds;
        // 48 MiB of slack covers allocator noise on a busy machine.
        XCTAssertLessThanOrEqual(captured.growth, plain.growth + 48 << 20, "the process grew with the response")
        XCTAssertLessThan(captured.growth, 120 << 20, "the response was not held in memory")
    }

    // MARK: - No inspector connected

    /// While no inspector is connected the handlers build no events, but
    /// every event a flow would have sent is counted as dropped (three per
    /// exchange: started, response, finished; each redirect hop is one), the
    /// app sees the same as without capture, and a flow that started before
    /// an inspector connected sends it nothing later (no events of a flow
    /// whose start it never got). Once connected, flows are logged again.
    func testWithoutAnInspectorEventsAreCountedAsDroppedNotBuilt() async throws {
        agent.stop()
        inspector.kill()
        let path = temporarySocketPath("ahc-noinspector")
        agent = try CaptureAgent.start(.init(destination: .unix(path: path)))
        XCTAssertFalse(agent.isConnected)
        var captured = ahcConfiguration()
        agent.capture(&captured)

        let requests = [
            AHCRequest(url: server.url("/text?none").absoluteString),
            AHCRequest(method: .POST, url: server.url("/echo?none").absoluteString, body: Array("body".utf8)),
            AHCRequest(url: server.url("/redirect/302?to=/text").absoluteString),
            AHCRequest(url: server.url("/status/404").absoluteString),
        ]
        for request in requests {
            for api in AHCAPI.allCases {
                let plain = await performAHC(request, api: api, configuration: ahcConfiguration())
                let outcome = await performAHC(request, api: api, configuration: captured)
                XCTAssertEqual(outcome, plain, "\(request.url) \(api)")
            }
        }
        // 5 exchanges on the wire per API (the redirect is two), 3 events each.
        XCTAssertTrue(eventually { agent.statistics.droppedEvents == 2 * 5 * 3 }, "\(agent.statistics)")
        XCTAssertEqual(agent.statistics.droppedEvents, 30, "no event counted twice")

        // A flow under way when an inspector connects stays unrecorded.
        let slowURL = server.url("/drip/10").absoluteString
        let slowAgent = agent!
        let slow = Task {
            var configuration = ahcConfiguration()
            slowAgent.capture(&configuration)
            return await performAHC(AHCRequest(url: slowURL), api: .async, configuration: configuration)
        }
        // The request is on the wire (its flow begun) before an inspector listens.
        XCTAssertTrue(eventually { server.requests.contains { $0.uri == "/drip/10" } })
        let late = try TestInspector(path: path)
        defer { late.kill() }
        XCTAssertTrue(eventually { agent.isConnected })
        let slowOutcome = await slow.value
        XCTAssertEqual(slowOutcome.body.count, 10 * 1024)
        let after = await performAHC(AHCRequest(url: server.url("/text?after").absoluteString), api: .async, configuration: captured)
        XCTAssertEqual(after.status, 200)
        var flows: [NetworkLog] = []
        XCTAssertTrue(eventually {
            flows = late.flows.values.filter { $0.state.isFinal }
            return !flows.isEmpty
        })
        XCTAssertEqual(flows.map(\.request.url), [server.url("/text?after").absoluteString], "only the flow that started with the inspector there")
        let started = Set(late.allMessages.compactMap { if case .flowStarted(let log) = $0 { log.id } else { nil } })
        let orphans = late.allMessages.filter {
            switch $0 {
            case .flowResponse(let event): !started.contains(event.id)
            case .flowFinished(let event): !started.contains(event.id)
            case .grpcMessage(let event): !started.contains(event.id)
            case .bodyPart(let event): !started.contains(event.id)
            case .webSocketMessage(let event): !started.contains(event.id)
            case .flowStarted, .hello, .status, .held, .released: false
            }
        }
        XCTAssertEqual(orphans.count, 0, "events of a flow whose start the inspector never got")
        XCTAssertEqual(agent.statistics.droppedEvents, 33, "the slow flow's three events are counted too")
    }
}
#endif
