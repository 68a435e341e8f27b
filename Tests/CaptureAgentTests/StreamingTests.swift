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

/// The event stream: absent, killed and slow inspectors, frame limits, and
/// what every connection starts with.
final class StreamingTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server?.shutdown()
    }

    private func get(_ path: String, count: Int, on session: URLSession) async -> [AppOutcome] {
        var outcomes: [AppOutcome] = []
        for index in 0 ..< count {
            outcomes.append(await performExchange(URLRequest(url: server.url("\(path)?i=\(index)")), on: session, style: .completionHandler))
        }
        return outcomes
    }

    private func capturedSession(_ agent: CaptureAgent) -> URLSession {
        let configuration = URLSessionConfiguration.default
        agent.capture(configuration)
        return URLSession(configuration: configuration)
    }

    func testEveryConnectionStartsWithHelloThenStatus() throws {
        let inspector = try TestInspector(path: temporarySocketPath("hello"))
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.appName = "hello-test"
            $0.token = "t0ken"
        })
        defer { agent.stop() }
        XCTAssertTrue(eventually { inspector.allMessages.count >= 2 })
        guard case .hello(let hello)? = inspector.allMessages.first else { return XCTFail("\(inspector.allMessages)") }
        XCTAssertEqual(hello.appName, "hello-test")
        XCTAssertEqual(hello.token, "t0ken")
        XCTAssertEqual(hello.processID, Int(getpid()))
        XCTAssertEqual(hello.agentName, "CaptureAgent")
        XCTAssertEqual(inspector.allMessages[1], .status(AgentStatus(droppedEvents: 0, queuedEvents: 0)))
    }

    /// A flow's later events go only where its start went. One whose start
    /// the inspector never got (dropped, or sent to an earlier connection)
    /// would be discarded there and acknowledged: lost without being
    /// counted. The agent drops and counts them instead.
    func testEventsOfAFlowWhoseStartWasNotSentHereAreCountedNotSent() throws {
        let path = temporarySocketPath("orphans")
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.initialConnectionWait = 0 })
        defer { agent.stop() }
        let timing = Timing(startedAt: Date())
        let early = NetworkLog(request: Request(method: "GET", url: "http://h/early", headers: []), timing: timing)
        agent.emit(.flowStarted(early))  // no inspector yet: dropped, counted

        let inspector = try TestInspector(path: path)
        defer { inspector.kill() }
        XCTAssertTrue(eventually(timeout: 20) { agent.isConnected })
        agent.emit(.flowResponse(FlowResponse(id: early.id, response: Response(statusCode: 200, headers: []), timing: timing)))
        agent.emit(.flowFinished(FlowFinished(id: early.id, state: .completed, timing: timing)))
        let late = NetworkLog(request: Request(method: "GET", url: "http://h/late", headers: []), timing: timing)
        agent.emit(.flowStarted(late))
        agent.emit(.flowFinished(FlowFinished(id: late.id, state: .completed, timing: timing)))

        XCTAssertTrue(eventually { self.inspector(inspector, has: late.id) })
        let ids = inspector.allMessages.compactMap { message -> FlowID? in
            switch message {
            case .flowStarted(let log): log.id
            case .flowResponse(let event): event.id
            case .flowFinished(let event): event.id
            default: nil
            }
        }
        XCTAssertEqual(ids, [late.id, late.id], "nothing of the flow whose start the inspector never got")
        XCTAssertEqual(agent.statistics.droppedEvents, 3, "all three of its events are counted")
    }

    private func inspector(_ inspector: TestInspector, has id: FlowID) -> Bool {
        inspector.allMessages.contains { if case .flowFinished(let event) = $0 { event.id == id } else { false } }
    }

    /// A lying or broken inspector: a receipt for more events than were
    /// written is capped (no negative loss), and bytes that are not
    /// receipts end that connection; the agent reconnects and the app's
    /// requests are untouched.
    func testAHostileInspectorsReceiptsCannotHarmTheAgentOrTheApp() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("hostile-receipts"))
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)))
        defer { agent.stop() }
        XCTAssertTrue(eventually { inspector.allMessages.count >= 2 })
        inspector.write(Receipt(events: 1_000_000).frame(), toConnection: 0)
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        let before = await get("/text", count: 3, on: session)
        XCTAssertEqual(before.map(\.status), [200, 200, 200])
        // In place, a completion handler's flow is started and finished
        // (the response comes with the end): two events each.
        XCTAssertTrue(eventually { inspector.allMessages.filter(\.isFlowEvent).count == 6 })
        inspector.write(Data([0, 0, 0, 3]) + Data("xyz".utf8), toConnection: 0)
        XCTAssertTrue(eventually { agent.statistics.connections >= 2 }, "not a receipt stream: the agent reconnects \(agent.statistics)")
        XCTAssertEqual(agent.statistics.unreadEventsDropped, 0, "the lie was capped at what was written: \(agent.statistics)")
        XCTAssertEqual(agent.statistics.droppedEvents, 0)
        let after = await get("/text", count: 1, on: session)
        XCTAssertEqual(after.map(\.status), [200])
        XCTAssertTrue(eventually { inspector.messagesByConnection.count == 2 && inspector.messagesByConnection[1].filter(\.isFlowEvent).count == 2 })
    }

    /// An inspector that read every frame, acknowledged some, and went away
    /// before the agent read its receipt: an agent without control reads
    /// receipts every 32 events and when idle, and a slow inspector fills
    /// the socket before that. The receipt still waiting in the agent's
    /// buffer must decide what is counted; taking EPIPE on a Unix socket as
    /// "the inspector read everything" lost the rest uncounted (found with a
    /// slow `netinspect` in the kill-and-restart soak).
    func testAReceiptWaitingUnreadDecidesWhatADeadInspectorCostOverUnix() throws {
        let inspector = try TestInspector(path: temporarySocketPath("unread-receipt"))
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)))
        defer { agent.stop() }
        XCTAssertTrue(eventually { inspector.allMessages.count >= 2 }, "hello and status")
        let timing = Timing(startedAt: Date())
        func flow(_ index: Int) -> NetworkLog { NetworkLog(request: Request(method: "GET", url: "http://h/receipt/\(index)"), timing: timing) }
        for index in 0 ..< 5 {
            let log = flow(index)
            agent.emit(.flowStarted(log))
            agent.emit(.flowFinished(FlowFinished(id: log.id, state: .completed, timing: timing)))
        }
        XCTAssertTrue(eventually { inspector.allMessages.filter(\.isFlowEvent).count == 10 })
        // It showed two flows, said so, and went, having read everything.
        inspector.write(Receipt(events: 4).frame(), toConnection: 0)
        inspector.kill()
        let last = flow(5)
        agent.emit(.flowStarted(last))
        XCTAssertTrue(eventually { !agent.isConnected })
        agent.emit(.flowFinished(FlowFinished(id: last.id, state: .completed, timing: timing)))
        XCTAssertTrue(eventually { agent.statistics.droppedEvents == 6 + 2 }, "six unacknowledged, and the last flow: \(agent.statistics)")
        XCTAssertEqual(agent.statistics.unreadEventsDropped, 6, "\(agent.statistics)")
    }

    func testEventsGoOverTCPToo() async throws {
        let inspector = try TestInspector(path: "")
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .tcp(host: "127.0.0.1", port: inspector.port)) { $0.token = "tcp-token" })
        defer { agent.stop() }
        XCTAssertTrue(agent.isConnected, "start() waited for the first connection")
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        _ = await get("/text", count: 1, on: session)
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "/text?i=0").count == 1 })
        guard case .hello(let hello)? = inspector.allMessages.first else { return XCTFail("no hello") }
        XCTAssertEqual(hello.token, "tcp-token")
    }

    /// The cause of the TCP loss in `FaultInjectionTests`' mid-read kill: the
    /// agent reconnects at once, and its connection can land in the backlog
    /// of the inspector being killed, which resets it a moment later with
    /// whatever the agent wrote on it. No receipt ever came, and over TCP
    /// the kernel does not say what the peer left unread: everything written
    /// there must be counted. A listener that never accepts is that backlog.
    func testEventsWrittenToAConnectionNobodyAcceptedAreCountedOverTCP() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        XCTAssertTrue(bound && listen(listener, 4) == 0)
        let agent = try CaptureAgent.start(.init(destination: .tcp(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))))
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected }, "the kernel completes the handshake of a backlogged connection")
        let timing = Timing(startedAt: Date())
        for index in 0 ..< 5 {
            let log = NetworkLog(request: Request(method: "GET", url: "http://h/backlog/\(index)"), timing: timing)
            agent.emit(.flowStarted(log))
            agent.emit(.flowFinished(FlowFinished(id: log.id, state: .completed, timing: timing)))
        }
        XCTAssertTrue(eventually { agent.statistics.framesWritten == 2 + 10 }, "hello, status, 10 events: \(agent.statistics)")
        close(listener)
        XCTAssertTrue(eventually { !agent.isConnected }, "closing the listener resets the connection it never accepted")
        XCTAssertEqual(agent.statistics.droppedEvents, 10, "\(agent.statistics)")
        XCTAssertEqual(agent.statistics.unreadEventsDropped, 10)
    }

    func testAnUnreachableTCPDestinationCostsTheAppNothing() async throws {
        let closed = try TestInspector(path: "")
        let port = closed.port
        closed.kill()
        let started = Date()
        let agent = try CaptureAgent.start(.init(destination: .tcp(host: "127.0.0.1", port: port)))
        defer { agent.stop() }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "a refused connect returns at once")
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        let outcomes = await get("/text", count: 3, on: session)
        XCTAssertEqual(outcomes.compactMap(\.status), [200, 200, 200])
        XCTAssertEqual(agent.statistics.connections, 0)
    }

    func testWithNoInspectorTheAppIsUnaffectedAndEventsAreOnlyCounted() async throws {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: temporarySocketPath("absent"))))
        defer { agent.stop() }
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        let outcomes = await get("/text", count: 20, on: session)
        XCTAssertEqual(outcomes.map(\.status), Array(repeating: 200, count: 20))
        XCTAssertEqual(Set(outcomes.map(\.body)), [Data(TestHTTPServer.textBody)])
        XCTAssertTrue(eventually { agent.statistics.droppedEvents == 40 }, "2 events per flow (in place), all dropped: \(agent.statistics)")
        XCTAssertEqual(agent.statistics.connections, 0)
        XCTAssertEqual(agent.statistics.peakQueuedBytes, 0, "nothing is queued (or encoded) while disconnected")
    }

    func testAfterTheInspectorDiesAndRestartsTheAgentReconnectsWithHelloAndReportsDrops() async throws {
        let path = temporarySocketPath("restart")
        let first = try TestInspector(path: path)
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)))
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }

        _ = await get("/text", count: 5, on: session)
        XCTAssertTrue(eventually { first.flows.values.filter(\.state.isFinal).count == 5 })

        // Killed mid-stream: while large flows are being written to it.
        let server = self.server!
        async let flood = withTaskGroup(of: AppOutcome.self) { group in
            for index in 0 ..< 10 {
                group.addTask { await performExchange(URLRequest(url: server.url("/binary/200000?flood=\(index)")), on: session, style: .asyncAwait) }
            }
            return await group.reduce(into: [AppOutcome]()) { $0.append($1) }
        }
        // The flood is on its way to the inspector once its first flow is in.
        let flooding = await waitUntil { first.flows.values.contains { $0.request.url.contains("flood=") } }
        XCTAssertTrue(flooding, "no flow of the flood reached the inspector")
        first.kill()
        let flooded = await flood
        XCTAssertEqual(flooded.map(\.body), Array(repeating: Data(TestHTTPServer.pattern(count: 200_000)), count: 10))
        XCTAssertTrue(eventually { !agent.isConnected }, "the agent notices the inspector is gone")
        let dropsBeforeDowntime = agent.statistics.droppedEvents
        let whileDown = await get("/text", count: 5, on: session)
        XCTAssertEqual(whileDown.map(\.status), Array(repeating: 200, count: 5))

        let second = try TestInspector(path: path)
        defer { second.kill() }
        XCTAssertTrue(eventually { agent.isConnected }, "reconnects with backoff")
        _ = await get("/status/404", count: 2, on: session)
        XCTAssertTrue(eventually { second.flows.values.filter(\.state.isFinal).count == 2 })

        let messages = second.messagesByConnection.first ?? []
        guard case .hello? = messages.first else { return XCTFail("a new connection must start with hello: \(messages.prefix(2))") }
        guard case .status(let status)? = messages.dropFirst().first else { return XCTFail("hello must be followed by status") }
        XCTAssertEqual(status.droppedEvents, dropsBeforeDowntime + 10, "cumulative: the 5 flows while down add 2 events each (in place)")
        XCTAssertEqual(agent.statistics.connections, 2)
    }

    func testASlowInspectorNeitherSlowsTheAppNorGrowsTheQueuePastItsBound() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("slow"), slowReadBytesPerTick: 2048)
        defer { inspector.kill() }
        let bound = 256 * 1024
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.maximumPendingBytes = bound
            $0.flushTimeout = 0.5
        })
        XCTAssertTrue(eventually { agent.isConnected })
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }

        let started = Date()
        let outcomes = await get("/binary/100000", count: 40, on: session)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(outcomes.map(\.body), Array(repeating: Data(TestHTTPServer.pattern(count: 100_000)), count: 40))

        let statistics = agent.statistics
        let largestEvent = 1024 + (100_000 + 2) / 3 * 4
        XCTAssertGreaterThan(statistics.eventsWithBodiesCut, 0, "bodies gave way: \(statistics)")
        XCTAssertLessThanOrEqual(statistics.peakQueuedBytes, bound + largestEvent, "\(statistics)")
        print("slow inspector: 40 × 100 kB in \(String(format: "%.2f", elapsed)) s; \(statistics)")

        let stopStarted = Date()
        agent.stop()
        XCTAssertLessThan(Date().timeIntervalSince(stopStarted), 2, "stop() waits a bounded time even when the writer is stuck")
    }

    func testTheQueueKeepsAtMostTheConfiguredNumberOfEventsAndTheNextStatusReportsTheDrops() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("count"), slowReadBytesPerTick: 1)
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.maximumPendingEvents = 8
            $0.flushTimeout = 0.5
        })
        defer { agent.stop() }
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }

        // Big events fill the socket buffer of a reader that hardly reads; then the queue.
        let outcomes = await get("/binary/100000", count: 30, on: session)
        XCTAssertEqual(outcomes.compactMap(\.status), Array(repeating: 200, count: 30))
        let flooded = agent.statistics
        XCTAssertLessThanOrEqual(flooded.peakQueuedEvents, 8, "\(flooded)")
        XCTAssertGreaterThan(flooded.droppedEvents, 0, "\(flooded)")

        inspector.readFast()
        _ = await get("/text", count: 1, on: session)
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "/text?i=0").count == 1 })
        XCTAssertEqual(inspector.reportedDrops, agent.statistics.droppedEvents, "the status before the next event carries the cumulative count")
        XCTAssertEqual(inspector.finishedFlows(urlSuffix: "/binary/100000?i=29").count, 1, "the oldest events are dropped, the newest kept")
        XCTAssertEqual(inspector.decodingErrors, [])
    }

    func testFramesAboveTheViewerLimitAreReencodedWithShorterBodies() throws {
        let big = CapturedBody(data: Data(repeating: 7, count: 20 * 1024 * 1024))
        let event = FlowFinished(
            id: FlowID(), state: .completed,
            response: Response(statusCode: 200, body: big),
            requestBody: CapturedBody(data: Data(repeating: 1, count: 1024)),
            timing: Timing(startedAt: Date(), finished: 1)
        )
        var buffer: [UInt8] = []
        XCTAssertTrue(FrameFitting.append(.flowFinished(event), to: &buffer, encoder: FrameEncoder(), version: 1))
        let frame = Data(buffer)
        XCTAssertLessThanOrEqual(frame.count - Wire.lengthPrefixSize, Wire.defaultMaximumFrameSize)
        guard case .flowFinished(let decoded)? = try Message.decode(payload: frame.dropFirst(Wire.lengthPrefixSize)) else {
            return XCTFail("not a flowFinished")
        }
        let body = try XCTUnwrap(decoded.response?.body)
        XCTAssertTrue(body.isTruncated)
        XCTAssertEqual(body.size, 20 * 1024 * 1024, "the full size survives the cut")
        XCTAssertGreaterThan(body.data.count, 8 * 1024 * 1024, "cut no more than needed")
        XCTAssertEqual(decoded.requestBody?.data.count, 1024, "small bodies are kept whole")
    }

    func testOffsetsComeFromTheMonotonicClockEvenWhenTheWallClockJumpsBack() {
        let monotonic = Locked<UInt64>(1_000_000_000)
        let wall = Locked(Date(timeIntervalSince1970: 2_000_000_000))
        let clock = FlowClock(wallNow: { wall.current }, monotonicNanoseconds: { monotonic.current })
        var recorder = FlowStart(request: URLRequest(url: URL(string: "http://127.0.0.1/x")!), additionalHeaders: nil,
                                 sessionID: 1, taskID: 1).recorder(id: FlowID(), configuration: .init(), clock: clock)
        wall.withLock { $0 = Date(timeIntervalSince1970: 1_000_000_000) }
        monotonic.withLock { $0 += 250_000_000 }
        _ = recorder.received(HTTPURLResponse(url: URL(string: "http://127.0.0.1/x")!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
        monotonic.withLock { $0 += 500_000_000 }
        guard case .flowFinished(let finished) = recorder.finished(error: nil, requestBody: nil) else { return XCTFail() }
        XCTAssertEqual(finished.timing.startedAt, Date(timeIntervalSince1970: 2_000_000_000))
        XCTAssertEqual(finished.timing.firstResponseByte ?? 0, 0.25, accuracy: 1e-9)
        XCTAssertEqual(finished.timing.finished ?? 0, 0.75, accuracy: 1e-9)
    }

    /// A measured phase is the difference of two offsets in whole
    /// nanoseconds, and is kept as that many nanoseconds, so the wire writes
    /// it as its exact decimal (at most nine places) rather than the 17
    /// digits a bare subtraction's last-bit error takes.
    func testMeasuredPhasesAreWholeNanosecondsWrittenAsTheirDecimal() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0 ..< 2_000 {
            let (sent, head, end) = (UInt64.random(in: 0 ..< 1_000_000, using: &rng), UInt64.random(in: 1_000_000 ..< 90_000_000, using: &rng),
                                     UInt64.random(in: 90_000_000 ..< 20_000_000_000, using: &rng))
            let nanoseconds = Locked<UInt64>(1_000)
            let clock = FlowClock(wallNow: { Date(timeIntervalSince1970: 2_000_000_000) }, monotonicNanoseconds: { nanoseconds.current })
            var recorder = FlowStart(method: "GET", url: "http://127.0.0.1/x", headers: [], sessionID: 1, taskID: 1)
                .recorder(id: FlowID(), configuration: .init(), clock: clock)
            recorder.measurePhases(source: "test", blocked: nil)
            nanoseconds.withLock { $0 = 1_000 + sent }
            recorder.markRequestSent()
            nanoseconds.withLock { $0 = 1_000 + head }
            _ = recorder.received(statusCode: 200, headers: [], mimeType: nil)
            nanoseconds.withLock { $0 = 1_000 + end }
            let finished = recorder.finished(state: .completed, error: nil, requestBody: nil)
            guard case .flowFinished(let event) = finished, let phases = event.timing.phases else { return XCTFail("no phases") }
            XCTAssertEqual(phases.wait, Double(head - sent) / 1e9)
            XCTAssertEqual(phases.receive, Double(end - head) / 1e9)
            let json = String(decoding: FrameEncoder().payload(finished), as: UTF8.self)
            for name in ["\"wait\":", "\"receive\":"] {
                let text = try XCTUnwrap(json.range(of: name).map { json[$0.upperBound...].prefix { $0 != "," && $0 != "}" } })
                XCTAssertLessThanOrEqual(text.split(separator: ".").last?.count ?? 0, 9, "\(name) \(text)")
                XCTAssertFalse(text.contains("e"), "\(name) \(text)")
            }
        }
    }

    /// The system clock keeps a flow's start to the microsecond, which the
    /// wire writes as an exact decimal of 16 digits (the reader's fast path).
    func testTheSystemWallClockIsKeptToTheMicrosecond() {
        for _ in 0 ..< 100 {
            let seconds = FlowClock.system.wallNow().timeIntervalSince1970
            let microseconds = seconds * 1_000_000
            XCTAssertEqual(microseconds, microseconds.rounded(), accuracy: 1e-3, "\(seconds)")
        }
    }
}
