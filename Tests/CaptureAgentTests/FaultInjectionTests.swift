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

/// Issue 7, faults seen from the app: the real `netinspect` killed or
/// stopped under load, and a 200 MB response. Real processes, real sockets.
final class FaultInjectionTests: XCTestCase, @unchecked Sendable {
    /// Events the agent produces for each of these completion-handler
    /// flows: captured in place, the response comes with the end, so
    /// `flowStarted` and `flowFinished` (no `flowResponse`).
    static let eventsPerFlow = 2
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server?.shutdown()
    }

    private func capturedSession(_ agent: CaptureAgent, timeout: TimeInterval = 30) -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        agent.capture(configuration)
        return URLSession(configuration: configuration)
    }

    // MARK: - What the kernel says about unread bytes

    /// The measurement behind ``UnreadFrames``: SIOCOUTQ on a Unix stream
    /// socket counts skb memory, not bytes; a partly read write stays
    /// charged; and the charge vanishes when the peer goes, unread or not.
    func testTheKernelChargesUnreadFramesToTheSenderUntilThePeerIsGone() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[0]) }
        func charge() -> Int32 {
            var value: Int32 = -1
            XCTAssertEqual(ioctl(pair[0], UInt(TIOCOUTQ), &value), 0)
            return value
        }
        let payload = [UInt8](repeating: 7, count: 10_000)
        XCTAssertEqual(send(pair[0], payload, payload.count, 0), 10_000)
        let written = charge()
        XCTAssertGreaterThan(written, 10_000, "truesize: payload plus skb overhead")
        var scratch = [UInt8](repeating: 0, count: 3000)
        XCTAssertEqual(recv(pair[1], &scratch, scratch.count, 0), 3000)
        XCTAssertEqual(charge(), written, "a partly read skb stays charged in full")
        close(pair[1])
        XCTAssertEqual(charge(), 0, "the peer's unread data is freed with its socket")
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        XCTAssertEqual(getsockopt(pair[0], SOL_SOCKET, SO_ERROR, &error, &size), 0)
        XCTAssertEqual(error, ECONNRESET, "the only trace left: the peer died with unread data")
        XCTAssertEqual(send(pair[0], payload, 1, Int32(MSG_NOSIGNAL)), -1)
        XCTAssertEqual(errno, EPIPE)

        // A peer that read everything before closing leaves no error behind.
        var other: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &other), 0)
        defer { close(other[0]) }
        XCTAssertEqual(send(other[0], payload, 3000, 0), 3000)
        XCTAssertEqual(recv(other[1], &scratch, scratch.count, 0), 3000)
        close(other[1])
        XCTAssertEqual(send(other[0], payload, 1, Int32(MSG_NOSIGNAL)), -1)
        XCTAssertEqual(errno, EPIPE)
        error = -1
        XCTAssertEqual(getsockopt(other[0], SOL_SOCKET, SO_ERROR, &error, &size), 0)
        XCTAssertEqual(error, 0)
        print("SIOCOUTQ: 10000 bytes written -> \(written); after a 3000-byte read -> \(written); after the peer closed -> 0, SO_ERROR ECONNRESET")
    }

    func testUnreadFramesKeepsTheShortestRecentRunThatCoversTheCharge() {
        var frames = UnreadFrames()
        frames.wrote(bytes: 100, events: 0, chargeBefore: 0, chargeAfter: 768)
        frames.wrote(bytes: 500, events: 1, chargeBefore: 768, chargeAfter: 768 + 1280)
        frames.wrote(bytes: 500, events: 1, chargeBefore: 2048, chargeAfter: 2048 + 1280)
        XCTAssertEqual(frames.count, 3)
        XCTAssertEqual(frames.events, 2)
        frames.observe(charge: 2560)
        XCTAssertEqual(frames.count, 2, "the hello was read")
        frames.observe(charge: 1000)
        XCTAssertEqual(frames.events, 1, "only the last frame can hold 1000 of charge")
        // The peer read while we wrote: the measured rise is too small, the
        // payload size is the floor; a short charge keeps more frames, never fewer.
        frames.wrote(bytes: 400, events: 1, chargeBefore: 1280, chargeAfter: 1300)
        frames.observe(charge: 1300)
        XCTAssertEqual(frames.events, 2)
        frames.observe(charge: 0)
        XCTAssertEqual(frames.count, 0)
        XCTAssertEqual(frames.events, 0)
        frames.wrote(bytes: 10, events: 1, chargeBefore: nil, chargeAfter: nil)
        XCTAssertEqual(frames.events, 1, "no sample: kept, with its payload size as charge")
    }

    // MARK: - Killed under load

    /// The real inspector is stopped, the app keeps going until the
    /// agent's socket buffer is full and events queue up, then the inspector
    /// is killed, and a new one starts on the same socket. Every request
    /// succeeds with the right body; the agent reconnects with hello; and
    /// every event is accounted for exactly: received by an inspector, or
    /// counted as dropped (queued, in flight, or written but never read).
    ///
    /// The inspector is stopped first, so the kill finds frames unread in the
    /// socket and the agent queue full; the test below kills it mid-read.
    func testInspectorKilledUnderLoadAndRestartedLosesNoEventUncounted() throws {
        let path = temporarySocketPath("kill")
        let first = try InspectorProcess(listeningOn: path)
        defer { first.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) {
            $0.appName = "faults-kill"
            $0.flushTimeout = 1
        })
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        let server = self.server!
        let body = Data(TestHTTPServer.pattern(count: 20_000))

        // Warm up with the inspector reading; wait until it printed every flow.
        let warm = RequestLoop(workers: 4, session: session) { worker, index in
            (URLRequest(url: server.url("/text?warm=\(worker)-\(index)")), Data(TestHTTPServer.textBody))
        }
        XCTAssertTrue(warm.waitFor(more: 20))
        let warmFlows = warm.finish()
        XCTAssertTrue(eventually { first.lineCount == warmFlows }, "\(first.lineCount) of \(warmFlows) flows printed")
        XCTAssertTrue(first.stop(), "netinspect did not stop")

        // Under load: the socket buffer fills, then the agent's queue; then SIGKILL.
        let load = RequestLoop(workers: 4, session: session) { worker, index in
            (URLRequest(url: server.url("/binary/20000?load=\(worker)-\(index)")), body)
        }
        XCTAssertTrue(eventually { agent.statistics.queuedEvents >= 3 }, "the writer never blocked: \(agent.statistics)")
        first.killAndWait()
        XCTAssertTrue(eventually { !agent.isConnected }, "the agent notices the inspector is gone")
        let atDisconnect = agent.statistics
        XCTAssertTrue(load.waitFor(more: 20), "requests go on while no inspector listens")

        let second = try TestInspector(path: path)
        defer { second.kill() }
        XCTAssertTrue(eventually { agent.isConnected }, "reconnects with backoff")
        XCTAssertTrue(load.waitFor(more: 20))
        let loadFlows = load.finish()

        XCTAssertEqual(warm.failures.current + load.failures.current, [], "every request succeeds with the right body")
        let produced = Self.eventsPerFlow * (warmFlows + loadFlows)
        func receivedBySecond() -> Int {
            second.allMessages.filter(\.isFlowEvent).count
        }
        let receivedByFirst = Self.eventsPerFlow * first.lineCount
        let settled = eventually {
            receivedByFirst + receivedBySecond() + agent.statistics.droppedEvents == produced
        }
        let statistics = agent.statistics
        print("""
            killed inspector: \(warmFlows) + \(loadFlows) flows = \(produced) events; first printed \(first.lineCount) flows \
            (\(receivedByFirst) events), second received \(receivedBySecond()) events, agent dropped \(statistics.droppedEvents) \
            (\(atDisconnect.droppedEvents) at the disconnect, of them \(atDisconnect.unreadEventsDropped) written but unread)
            """)
        XCTAssertTrue(settled, "produced \(produced) != received \(receivedByFirst) + \(receivedBySecond()) + dropped \(statistics.droppedEvents)")
        XCTAssertEqual(first.lineCount, warmFlows, "a stopped inspector reads nothing")
        XCTAssertGreaterThan(atDisconnect.unreadEventsDropped, 0, "events sat unread in the socket when it died")
        // Sometimes 3: the dying inspector closes the agent's connection a
        // moment before its listening socket, and the agent's immediate
        // reconnect lands in that listener's backlog, then is reset too.
        // The accounting above holds either way.
        XCTAssertGreaterThanOrEqual(statistics.connections, 2)
        XCTAssertEqual(second.messagesByConnection.count, 1)
        XCTAssertEqual(second.reportedDrops, statistics.droppedEvents, "the new inspector is told the whole count")
        guard case .hello(let hello)? = second.messagesByConnection.first?.first else {
            return XCTFail("the new connection must start with hello")
        }
        XCTAssertEqual(hello.appName, "faults-kill")
        XCTAssertEqual(second.decodingErrors, [])
    }

    /// The real inspector killed while it reads and prints under load (no
    /// SIGSTOP first), over a Unix socket and over TCP. The agent counts
    /// what the dead inspector never printed from its receipts: the events
    /// written on the connection minus the last receipt's count. So every
    /// event is printed or counted as dropped; none is lost uncounted.
    ///
    /// The count can exceed the loss by the events the inspector printed in
    /// the instant before SIGKILL, before its receipt for them was written
    /// (it prints a batch, then acknowledges it): `overcount` below, printed.
    func testInspectorKilledMidReadLosesNoEventUncountedOverUnixAndTCP() throws {
        for endpoint in ["unix:\(temporarySocketPath("midread"))", "tcp:127.0.0.1:\(freeLoopbackPort())"] {
            let inspector = try InspectorProcess(listen: endpoint)
            defer { inspector.killAndWait() }
            let agent = try CaptureAgent.start(.init(destination: try Endpoint(parsing: endpoint)) {
                $0.appName = "faults-midread"
                $0.flushTimeout = 1
            })
            defer { agent.stop() }
            XCTAssertTrue(eventually { agent.isConnected }, endpoint)
            let session = capturedSession(agent)
            defer { session.finishTasksAndInvalidate() }
            let server = self.server!
            let body = Data(TestHTTPServer.pattern(count: 20_000))
            let load = RequestLoop(workers: 4, session: session) { worker, index in
                (URLRequest(url: server.url("/binary/20000?midread=\(worker)-\(index)")), body)
            }
            XCTAssertTrue(load.waitFor(more: 60), endpoint)
            XCTAssertGreaterThan(inspector.lineCount, 0, "the inspector was printing when killed")
            inspector.killAndWait()
            XCTAssertTrue(eventually { !agent.isConnected }, "the agent notices the inspector is gone")
            XCTAssertTrue(load.waitFor(more: 10), "requests go on with no inspector")
            let flows = load.finish()
            XCTAssertEqual(load.failures.current, [], "every request succeeds with the right body")

            let produced = Self.eventsPerFlow * flows
            let printed = Self.eventsPerFlow * (inspector.finalLineCount ?? -1)
            // The agent counts whatever it submits with no inspector; wait for the last flows to be counted.
            XCTAssertTrue(eventually { agent.statistics.droppedEvents + printed >= produced })
            let statistics = agent.statistics
            let overcount = printed + statistics.droppedEvents - produced
            print("""
                killed mid-read (\(endpoint.prefix(4))): \(flows) flows = \(produced) events; inspector printed \(inspector.lineCount) flows \
                (\(printed) events); agent dropped \(statistics.droppedEvents), of them \(statistics.unreadEventsDropped) written \
                but never acknowledged; overcount \(overcount); \(statistics.connections) connections
                """)
            XCTAssertGreaterThanOrEqual(overcount, 0, "\(endpoint): events lost uncounted")
            XCTAssertLessThanOrEqual(overcount, statistics.unreadEventsDropped, "only unacknowledged events can be over-counted")
            XCTAssertGreaterThan(statistics.unreadEventsDropped, 0, "\(endpoint): events were in flight when it died")
        }
    }

    /// An agent that stops while receipts wait unread in its socket reads
    /// them before closing: a close with bytes unread would be a reset, and
    /// netinspect would log the clean goodbye as "Connection reset by peer".
    func testAnAgentThatStopsSaysGoodbyeCleanlyWithReceiptsPending() throws {
        let path = temporarySocketPath("goodbye")
        let inspector = try InspectorProcess(listeningOn: path)
        defer { inspector.killAndWait() }
        for round in 0 ..< 3 {
            let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.appName = "faults-goodbye" })
            XCTAssertTrue(eventually { agent.isConnected })
            let session = capturedSession(agent)
            let before = inspector.lineCount
            XCTAssertEqual(fetch(URLRequest(url: server.url("/text?goodbye=\(round)")), on: session).outcome.status, 200)
            // Stop as soon as the flow is printed: its receipt is on its way
            // or already in the agent's socket, not yet read.
            XCTAssertTrue(eventually { inspector.lineCount == before + 1 })
            agent.stop()
            session.finishTasksAndInvalidate()
        }
        let goodbyes = { inspector.errorOutput.components(separatedBy: "\n").filter { $0.contains("faults-goodbye") && $0.contains("disconnected") } }
        XCTAssertTrue(eventually { goodbyes().count == 3 }, inspector.errorOutput)
        XCTAssertEqual(goodbyes().filter { $0.contains("disconnected:") }, [], "every goodbye is a clean end of stream")
    }

    /// The other side of the count: an inspector that read everything and
    /// quit (SIGTERM) costs no drops, unread or otherwise.
    func testAnInspectorThatReadEverythingAndQuitCostsNoDrops() throws {
        let path = temporarySocketPath("quit")
        let inspector = try InspectorProcess(listeningOn: path)
        defer { inspector.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.flushTimeout = 1 })
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        for index in 0 ..< 10 {
            XCTAssertEqual(fetch(URLRequest(url: server.url("/binary/20000?quit=\(index)")), on: session).outcome.status, 200)
        }
        XCTAssertTrue(eventually { inspector.lineCount == 10 })
        inspector.kill(SIGTERM)
        XCTAssertTrue(eventually { !agent.isConnected }, "the agent notices the inspector quit")
        XCTAssertEqual(agent.statistics.droppedEvents, 0, "\(agent.statistics)")
        XCTAssertEqual(agent.statistics.unreadEventsDropped, 0)
    }

    // MARK: - Stalled

    /// The real inspector stopped (SIGSTOP) while the app makes requests
    /// with bodies: the app is as fast as before, the agent's queue stays
    /// within `maximumPendingBytes` because bodies give way, and after
    /// SIGCONT the same connection carries on and shows every flow.
    func testStalledInspectorSlowsNoRequestAndTheQueueStaysWithinItsBound() throws {
        let path = temporarySocketPath("stall")
        let inspector = try InspectorProcess(listeningOn: path)
        defer { inspector.killAndWait() }
        let bound = 512 * 1024
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) {
            $0.maximumPendingBytes = bound
            $0.flushTimeout = 1
        })
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        let session = capturedSession(agent)
        defer { session.finishTasksAndInvalidate() }
        let body = Data(TestHTTPServer.pattern(count: 50_000))
        func post(_ label: String) -> (AppOutcome, Double) {
            var request = URLRequest(url: server.url("/echo?\(label)"))
            request.httpMethod = "POST"
            request.httpBody = body
            return fetch(request, on: session)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

        func unstalledRun(_ label: String) -> [Double] {
            (0 ..< 30).map { index in
                let (outcome, seconds) = post("\(label)=\(index)")
                XCTAssertEqual(outcome.body, body)
                return seconds
            }
        }

        _ = post("warm-up")
        let before = unstalledRun("before")
        // A debug-built inspector does not keep up with 100 kB flows every
        // 2 ms either, so drops happen already; let the queue drain first.
        XCTAssertTrue(eventually { agent.statistics.queuedEvents == 0 })
        // An empty queue means written to the socket, not yet printed: a
        // debug-built inspector can still be decoding the last flows.
        XCTAssertTrue(eventually { inspector.lineCount > 0 }, "the inspector printed nothing before it was stopped")

        XCTAssertTrue(inspector.stop(), "netinspect did not stop")
        var stalled: [Double] = []
        var largestQueue = 0
        for index in 0 ..< 30 {
            let (outcome, seconds) = post("stalled=\(index)")
            XCTAssertEqual(outcome.status, 200)
            XCTAssertEqual(outcome.body, body)
            stalled.append(seconds)
            largestQueue = max(largestQueue, agent.statistics.queuedBytes)
        }
        let whileStalled = agent.statistics
        XCTAssertGreaterThan(whileStalled.eventsWithBodiesCut, 0, "the stall filled the queue, and bodies gave way: \(whileStalled)")
        XCTAssertEqual(whileStalled.droppedEvents, 0, "no flow gave way: \(whileStalled)")
        XCTAssertLessThanOrEqual(whileStalled.peakQueuedBytes, bound, "each event (≈134 kB) is below the bound, so the bound holds")
        XCTAssertLessThanOrEqual(largestQueue, bound)

        inspector.kill(SIGCONT)
        let (recovered, _) = post("after-stall")
        XCTAssertEqual(recovered.body, body)
        XCTAssertTrue(eventually { inspector.output.contains("/echo?after-stall") }, "the inspector shows new flows again")
        XCTAssertTrue(eventually { (0 ..< 30).allSatisfy { inspector.output.contains("/echo?stalled=\($0)\"") } },
                      "every flow of the stall is shown, bodies cut or not")
        XCTAssertEqual(agent.statistics.connections, 1, "the connection survived the stall")
        XCTAssertTrue(agent.isConnected)

        // The unstalled reference brackets the stall, so that a change in
        // what else the shared machine runs does not read as the stall's doing.
        XCTAssertTrue(eventually { agent.statistics.queuedEvents == 0 })
        let after = unstalledRun("after")
        let unstalled = before + after
        let reference = max(median(before), median(after))
        print(String(format: "stalled inspector: median %.1f ms (unstalled %.1f ms before, %.1f after), slowest %.1f ms (unstalled %.1f ms); ",
                     median(stalled) * 1000, median(before) * 1000, median(after) * 1000, stalled.max()! * 1000, unstalled.max()! * 1000)
            + "queue peak \(whileStalled.peakQueuedBytes) B of \(bound); \(whileStalled)")
        XCTAssertLessThanOrEqual(median(stalled), 2 * reference, "a stalled inspector slows the app: \(stalled)")
        // An agent that waited for the inspector would slow every request
        // once the socket is full (all but the first few). The first few
        // after the stop share the CPU with the writer filling the socket
        // (seen: 5-7 ms against 1.3), and a shared 2-core machine has
        // hiccups (seen: 146 ms once): 3 of 30 may be outliers.
        let ninetieth = stalled.sorted()[stalled.count * 9 / 10 - 1]
        XCTAssertLessThanOrEqual(ninetieth, 2 * unstalled.max()!, "requests were held up: \(stalled)")
    }

    // MARK: - 200 MB

    /// A 200 MB response, streamed by the server 64 KiB at a time, through
    /// the agent: the app gets every byte in order, the log keeps the first
    /// `bodyCaptureLimit` bytes with the full size, and neither the agent's
    /// queue nor the process grows with the response.
    func testA200MBResponseReachesTheAppWholeAndTheLogKeepsTheCap() throws {
        let inspector = try TestInspector(path: temporarySocketPath("big"))
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) { $0.flushTimeout = 1 })
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        // FoundationNetworking's libcurl links zlib, so wherever the agent runs, crc32 is there.
        guard zlibCRC32 != nil else { throw Prerequisite("zlib's crc32 is not loaded in this process") }
        let length = 200 * 1024 * 1024
        let url = server.url("/stream/\(length)")
        /// One transfer: what the app saw, how long it took, how much the process grew.
        func transfer(captured: Bool) -> (result: StreamChecker.Result, seconds: Double, growth: Int) {
            let checker = StreamChecker()
            let configuration = URLSessionConfiguration.default
            configuration.timeoutIntervalForRequest = 60
            if captured { agent.capture(configuration) }
            let session = URLSession(configuration: configuration, delegate: checker, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            releaseFreedMemory()
            let before = residentBytes()
            let started = Date()
            session.dataTask(with: url).resume()
            XCTAssertEqual(checker.done.wait(timeout: .now() + 60), .success, "the transfer did not finish (captured: \(captured))")
            let result = checker.result.current
            return (result, Date().timeIntervalSince(started), result.peakResident - before)
        }

        // The same transfer without the agent first, for comparison.
        let (plainResult, plainElapsed, plainGrowth) = transfer(captured: false)
        XCTAssertEqual(plainResult.bytes, length)
        let (result, elapsed, growth) = transfer(captured: true)

        XCTAssertNil(result.error)
        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(result.bytes, length, "every byte")
        XCTAssertEqual(result.mismatchedChunks, 0, "every byte is the one the server sent, in order")
        XCTAssertEqual(result.checksum, StreamChecker.expectedChecksum(length: length), "CRC-32 of the whole stream")

        let limit = agent.configuration.bodyCaptureLimit
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "/stream/\(length)").first; return log != nil })
        let logged = try XCTUnwrap(log?.response?.body)
        XCTAssertEqual(logged.size, length, "the full size")
        XCTAssertTrue(logged.isTruncated)
        XCTAssertEqual(logged.data, Data(TestHTTPServer.pattern(count: limit)), "the first bodyCaptureLimit bytes")

        let statistics = agent.statistics
        print(String(format: "200 MB: %.1f s with the agent, %.1f s without; ", elapsed, plainElapsed)
            + "resident +\(growth / 1_048_576) MiB at most with, +\(plainGrowth / 1_048_576) MiB without; \(statistics)")
        XCTAssertLessThanOrEqual(statistics.peakQueuedBytes, 1024 + (limit + 2) / 3 * 4 + 64 * 1024, "the queue holds the capped body, not the response")
        // The process's own growth is not asserted: corelibs queues chunks
        // for the delegate without back-pressure, so it depends on
        // scheduling, agent or not (seen: 8-44 MiB without, 19-61 with on a
        // quiet machine; 222 MiB with the whole suite running alongside).
        // What the agent adds is bounded by the queue check above.
        _ = growth
        XCTAssertEqual(statistics.droppedEvents, 0)
    }
}

/// A data delegate that checks a `pattern(count:)` stream chunk by chunk
/// (against the 64 KiB period, so nothing grows) and sums it (zlib's
/// CRC-32), noting the peak resident memory as it goes. Both in C, so that
/// the delegate keeps up and corelibs has less to queue for it.
final class StreamChecker: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct Result {
        var status: Int?
        var bytes = 0
        var mismatchedChunks = 0
        var checksum: UInt = 0
        var error: Error?
        var peakResident = 0
    }

    let result = Locked(Result())
    let done = DispatchSemaphore(value: 0)
    private static let period = TestHTTPServer.pattern(count: 1 << 16)
    private var nextSample = 0

    /// CRC-32 of `length` bytes of the pattern.
    static func expectedChecksum(length: Int) -> UInt {
        var crc: UInt = 0
        var remaining = length
        period.withUnsafeBytes { period in
            while remaining > 0 {
                let count = min(remaining, period.count)
                crc = crc32(crc, UnsafeRawBufferPointer(rebasing: period[0 ..< count]))
                remaining -= count
            }
        }
        return crc
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        result.withLock { $0.status = (response as? HTTPURLResponse)?.statusCode }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var state = result.current
        let offset = state.bytes
        let matches = data.withUnsafeBytes { chunk -> Bool in
            state.checksum = crc32(state.checksum, chunk)
            return Self.period.withUnsafeBytes { period -> Bool in
                var position = 0
                while position < chunk.count {
                    let start = (offset + position) % period.count
                    let count = min(chunk.count - position, period.count - start)
                    if memcmp(chunk.baseAddress! + position, period.baseAddress! + start, count) != 0 { return false }
                    position += count
                }
                return true
            }
        }
        state.bytes += data.count
        if !matches { state.mismatchedChunks += 1 }
        if state.bytes >= nextSample {
            state.peakResident = max(state.peakResident, residentBytes())
            nextSample = state.bytes + 8 * 1024 * 1024
        }
        result.withLock { $0 = state }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        result.withLock {
            $0.error = error
            $0.peakResident = max($0.peakResident, residentBytes())
        }
        done.signal()
    }
}

private typealias CRC32Function = @convention(c) (UInt, UnsafePointer<UInt8>?, UInt32) -> UInt

/// zlib's `crc32`, loaded with FoundationNetworking (libcurl links zlib).
private let zlibCRC32: CRC32Function? = dlsym(dlopen(nil, RTLD_NOW), "crc32").map {
    unsafeBitCast($0, to: CRC32Function.self)
}

/// `crc` continued over `bytes` (zlib's CRC-32).
private func crc32(_ crc: UInt, _ bytes: UnsafeRawBufferPointer) -> UInt {
    guard let function = zlibCRC32, !bytes.isEmpty else { return crc }
    return function(crc, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
}
