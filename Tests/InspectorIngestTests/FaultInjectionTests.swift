#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@testable import InspectorIngest
import NIOConcurrencyHelpers
import TestSupport
import WireProtocol
import XCTest

/// Hostile and overwhelming input against the real listener on real sockets
/// (issue 7): a flood nobody drains, a crowd connecting at once, slow
/// connections, garbage among good agents. A bad connection is closed with
/// its reason, the others carry on, and the inspector's memory stays bounded.
/// The single-connection versions of the bad inputs are in ``ListenerTests``.
final class FaultInjectionTests: ListenerTestCase {
    // MARK: Back-pressure

    func testAFloodNobodyDrainsStopsAtTheEventBoundThenArrivesWholeAndInOrder() throws {
        try assertFloodIsHeldAndDelivered(limits: Inbox.Limits(maximumEvents: 2_000, maximumBytes: 64 << 20))
    }

    func testAFloodNobodyDrainsStopsAtTheByteBoundThenArrivesWholeAndInOrder() throws {
        try assertFloodIsHeldAndDelivered(limits: Inbox.Limits(maximumEvents: 1_000_000, maximumBytes: 4 << 20))
    }

    /// Four agents write 4,000 flows of 4 KiB bodies each (about 90 MB of
    /// frames) while nobody drains: the inbox fills to its bound and stays
    /// there, the listener stops reading (the senders stop making progress),
    /// and memory grows by far less than what was sent. Draining then lets
    /// every flow through, in each sender's order, ending in a clean close.
    private func assertFloodIsHeldAndDelivered(limits: Inbox.Limits, file: StaticString = #filePath, line: UInt = #line) throws {
        let senderCount = 4, flowCount = 2_500, bodySize = 4096
        let (_, inbox, _) = try startListener(limits: limits)
        let path = socketPath()
        let residentBefore = ListenerTesting.residentBytes()
        let written = NIOLockedValueBox([Int](repeating: 0, count: senderCount))
        let senders = Threads(senderCount) { sender in
            let agent = try TestAgent(unix: path)
            try agent.send(.hello(ListenerTesting.hello("Sender\(sender)")))
            let encoder = FrameEncoder()
            for index in 0 ..< flowCount {
                try agent.send(try encoder.encode(Self.floodFlow(sender: sender, index: index, bodySize: bodySize)))
                written.withLockedValue { $0[sender] += 1 }
            }
            agent.close()
        }

        // Fill up: nobody drains.
        func isFull() -> Bool { inbox.count >= limits.maximumEvents || inbox.byteCount >= limits.maximumBytes }
        XCTAssertTrue(eventually(timeout: 60) { isFull() }, "the inbox never filled: \(inbox.count) events, \(inbox.byteCount) bytes", file: file, line: line)
        XCTAssertTrue(eventually { inbox.hasRefused }, "full, the inbox refused the listener", file: file, line: line)
        // Two windows no event can end: nothing says the kernel's buffers are
        // full (the senders' counts stop changing, which is what is checked
        // next), and a listener that still read would show only as senders
        // that gain. So these two stay fixed windows, long against a loopback write.
        usleep(300_000)
        let stalledAt = written.withLockedValue { $0 }
        let heldEvents = inbox.count, heldBytes = inbox.byteCount
        usleep(700_000)
        XCTAssertEqual(written.withLockedValue { $0 }, stalledAt, "the senders still make progress: the listener still reads", file: file, line: line)
        XCTAssertEqual(inbox.count, heldEvents, file: file, line: line)
        XCTAssertLessThanOrEqual(heldEvents, limits.maximumEvents, file: file, line: line)
        XCTAssertLessThan(heldBytes, limits.maximumBytes + 2 * bodySize, "one frame past the byte bound at most", file: file, line: line)
        let sentSoFar = stalledAt.reduce(0, +)
        XCTAssertLessThan(sentSoFar, senderCount * flowCount / 2, "most of the flood is still unsent", file: file, line: line)
        let growth = ListenerTesting.residentBytes() - residentBefore
        let floodBytes = senderCount * flowCount * bodySize * 4 / 3
        assertResidentGrowth(growth, below: 24 << 20, "resident memory grew by \(growth >> 20) MiB while held", file: file, line: line)
        XCTAssertGreaterThan(floodBytes, 2 * (24 << 20), "the flood must dwarf the bound for the check to mean anything", file: file, line: line)

        // Drain: reading resumes and everything arrives, in order.
        var senderOf: [ConnectionID: Int] = [:]
        var next = [Int](repeating: 0, count: senderCount)
        var closed = 0
        var largestBacklog = 0
        let drainDeadline = ContinuousClock.now.advanced(by: .seconds(120))
        while closed < senderCount, ContinuousClock.now < drainDeadline {
            largestBacklog = max(largestBacklog, inbox.count)
            for event in inbox.wait(timeout: .milliseconds(100)) {
                switch event {
                case let .connected(id, hello, _):
                    senderOf[id] = Int(hello.appName.dropFirst("Sender".count))
                case let .message(id, .flowStarted(log)):
                    guard let sender = senderOf[id] else { return XCTFail("flow before hello", file: file, line: line) }
                    let expected = "https://example.com/\(sender)/\(next[sender])"
                    guard log.request.url == expected, log.request.body?.data.count == bodySize else {
                        return XCTFail("sender \(sender): got \(log.request.url), expected \(expected)", file: file, line: line)
                    }
                    next[sender] += 1
                case let .disconnected(id, reason):
                    XCTAssertNil(reason, "sender \(senderOf[id] ?? -1) closed cleanly", file: file, line: line)
                    closed += 1
                default:
                    XCTFail("unexpected \(event)", file: file, line: line)
                }
            }
        }
        XCTAssertEqual(next, [Int](repeating: flowCount, count: senderCount), "every flow of every sender arrived", file: file, line: line)
        XCTAssertLessThanOrEqual(largestBacklog, limits.maximumEvents, file: file, line: line)
        XCTAssertEqual(senders.join(timeout: .seconds(10)), [], file: file, line: line)
        let finalGrowth = ListenerTesting.residentBytes() - residentBefore
        assertResidentGrowth(finalGrowth, below: 64 << 20, "resident memory grew by \(finalGrowth >> 20) MiB in all", file: file, line: line)
    }

    /// An agent that writes and closes while its connection is held: NIO
    /// reads up to the end of the stream all the same, and the listener
    /// keeps what it read. Draining delivers every message, then the clean
    /// end, with the inbox never above its bound.
    func testAnAgentThatClosesWhileHeldDeliversEverythingThenItsEnd() throws {
        let (_, inbox, _) = try startListener(limits: Inbox.Limits(maximumEvents: 10, maximumBytes: 64 << 20))
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(ListenerTesting.hello()))
        for index in 0 ..< 100 { try agent.send(Self.flow("held/\(index)")) }
        agent.close()
        // The listener offered an eleventh event and was refused: the
        // connection is held, and the agent closed it before any drain.
        XCTAssertTrue(eventually { inbox.hasRefused }, "the inbox never refused: \(inbox.count) events")
        XCTAssertEqual(inbox.count, 10)

        var events: [InboxEvent] = []
        while events.count < 102 {
            let batch = inbox.wait(timeout: .seconds(5))
            guard !batch.isEmpty else { break }
            XCTAssertLessThanOrEqual(batch.count, 10)
            events += batch
        }
        guard case .connected(let id, _, _)? = events.first else { return XCTFail("\(events.prefix(1))") }
        XCTAssertEqual(Array(events.dropFirst()),
                       (0 ..< 100).map { .message(id, Self.flow("held/\($0)")) } + [.disconnected(id, reason: nil)])
    }

    /// An agent's end that the full inbox refused arrives once: the next
    /// agent's hello is what comes after it.
    func testAnEndTheFullInboxRefusedArrivesOnce() throws {
        let (_, inbox, _) = try startListener(limits: Inbox.Limits(maximumEvents: 1, maximumBytes: 64 << 20))
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(ListenerTesting.hello()))
        agent.close()
        // The inbox, full with the hello, refused the one thing that comes
        // after it: the end. Nothing is drained meanwhile.
        XCTAssertTrue(eventually { inbox.hasRefused }, "the end was never offered")
        XCTAssertEqual(inbox.count, 1)
        var events: [InboxEvent] = []
        while !events.contains(where: Self.isDisconnect) {
            let batch = inbox.wait(timeout: .seconds(5))
            guard !batch.isEmpty else { break }
            events += batch
        }
        let next = try TestAgent(unix: socketPath())
        try next.send(.hello(ListenerTesting.hello("Next")))
        events += inbox.collect(count: 1)
        guard case .connected(let id, _, _)? = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(events.count, 3, "\(events)")
        XCTAssertEqual(events.dropFirst().first, .disconnected(id, reason: nil))
        guard case .connected(_, let hello, _)? = events.last else { return XCTFail("\(events)") }
        XCTAssertEqual(hello.appName, "Next")
    }

    private static func isDisconnect(_ event: InboxEvent) -> Bool {
        if case .disconnected = event { return true }
        return false
    }

    /// A fault behind messages that are held is found once they are out,
    /// and is that connection's reason.
    func testAFaultReadWhileHeldIsTheReasonAfterTheMessagesBeforeIt() throws {
        let (_, inbox, _) = try startListener(limits: Inbox.Limits(maximumEvents: 5, maximumBytes: 64 << 20))
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(ListenerTesting.hello()))
        for index in 0 ..< 20 { try agent.send(Self.flow("held/\(index)")) }
        try agent.send(FrameEncoder.frame(payload: Data("this is not json".utf8)))
        // A refused offer: the inbox is full and the connection held, the fault still unread behind it.
        XCTAssertTrue(eventually { inbox.hasRefused }, "the inbox never refused: \(inbox.count) events")
        XCTAssertEqual(inbox.count, 5)
        let events = inbox.collect(count: 22)
        guard case .connected(let id, _, _)? = events.first, case .disconnected(id, let reason?)? = events.last else {
            return XCTFail("\(events)")
        }
        XCTAssertEqual(Array(events.dropFirst().dropLast()), (0 ..< 20).map { .message(id, Self.flow("held/\($0)")) })
        XCTAssertTrue(reason.hasPrefix("malformed payload"), reason)
        XCTAssertTrue(agent.waitForClose())
    }

    /// Shutting down with a full inbox does not wait for a drain: every
    /// connection, held or not, ends with "inspector shut down", after its
    /// hello.
    func testShutdownWithAFullInboxEndsEveryConnection() throws {
        let (_, inbox, _) = try startListener(limits: Inbox.Limits(maximumEvents: 5, maximumBytes: 64 << 20))
        let agents = try (0 ..< 3).map { index in
            let agent = try TestAgent(unix: socketPath())
            try agent.send(.hello(ListenerTesting.hello("App\(index)")))
            for flow in 0 ..< 20 { try agent.send(Self.flow("\(index)/\(flow)")) }
            return agent
        }
        // Every connection holds a refused offer when the listener shuts down:
        // the first inbox-full refusal alone does not say the other two
        // connections' hellos were read yet (a connection not read by then
        // ends without a word, which made this test fail now and then).
        XCTAssertTrue(eventually { inbox.refusals == 3 }, "not every connection was refused: \(inbox.refusals) refusals, \(inbox.count) events")
        XCTAssertEqual(inbox.count, 5)
        let started = ContinuousClock.now
        listeners.forEach { $0.shutdown() }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))

        var connected: [ConnectionID] = []
        var ended: [ConnectionID] = []
        for event in inbox.drain() {
            switch event {
            case .connected(let id, _, _): connected.append(id)
            case .disconnected(let id, "inspector shut down"):
                XCTAssertTrue(connected.contains(id), "\(id) ended before it connected")
                ended.append(id)
            case .message: break
            default: XCTFail("unexpected \(event)")
            }
        }
        XCTAssertEqual(Set(ended), Set(connected))
        XCTAssertEqual(ended.count, 3)
        for agent in agents { XCTAssertTrue(agent.waitForClose()) }
    }

    private static func floodFlow(sender: Int, index: Int, bodySize: Int) -> Message {
        .flowStarted(NetworkLog(
            request: Request(method: "POST", url: "https://example.com/\(sender)/\(index)",
                             body: CapturedBody(data: Data(repeating: UInt8(truncatingIfNeeded: index), count: bodySize))),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))
        ))
    }

    // MARK: Crowds

    func testAHundredAgentsConnectingAtOnceAllConnectAndDeliverEverything() throws {
        let agentCount = 100, flowCount = 5
        let (_, inbox, _) = try startListener()
        let path = socketPath()
        let residentBefore = ListenerTesting.residentBytes()
        let agents = Threads(agentCount) { index in
            let agent = try TestAgent(unix: path)
            try agent.send(.hello(ListenerTesting.hello("App\(index)")))
            for flow in 0 ..< flowCount { try agent.send(Self.flow("\(index)/\(flow)")) }
            agent.close()
        }
        XCTAssertEqual(agents.join(timeout: .seconds(30)), [])

        let events = inbox.collect(count: agentCount * (flowCount + 2), timeout: .seconds(30))
        var app: [ConnectionID: String] = [:]
        var paths: [ConnectionID: [String]] = [:]
        var cleanlyClosed = 0
        for event in events {
            switch event {
            case let .connected(id, hello, _): app[id] = hello.appName
            case let .message(id, .flowStarted(log)): paths[id, default: []].append(log.request.url)
            case .disconnected(_, nil): cleanlyClosed += 1
            default: XCTFail("unexpected \(event)")
            }
        }
        XCTAssertEqual(Set(app.values).count, agentCount, "every agent connected, each once")
        XCTAssertEqual(cleanlyClosed, agentCount)
        for (id, name) in app {
            let index = name.dropFirst("App".count)
            XCTAssertEqual(paths[id], (0 ..< flowCount).map { "https://example.com/\(index)/\($0)" }, name)
        }
        let growth = ListenerTesting.residentBytes() - residentBefore
        assertResidentGrowth(growth, below: 64 << 20, "resident memory grew by \(growth >> 20) MiB")
    }

    /// Good agents and four kinds of bad connection, all at once over TCP, so
    /// that each rejection names its connection by port. Each bad one is
    /// closed with the reason a ``MessageDecoder`` gives for its bytes (or
    /// the hello timeout, when they never form a frame); the good ones
    /// deliver everything before and after.
    func testHostileConnectionsAmongGoodOnesAreEachClosedWithTheirReason() throws {
        let timeout = Duration.seconds(1)
        let (_, inbox, bound) = try startListener([.tcp(host: "127.0.0.1", port: 0)], helloTimeout: timeout)
        guard case .tcp(_, let port)? = bound.first else { return XCTFail("bound \(bound)") }
        let residentBefore = ListenerTesting.residentBytes()

        let goodCount = 10, flowCount = 10
        var plans: [Hostile] = (0 ..< goodCount).map { _ in .good }
        plans += (1 ... 10).map { .randomBytes(seed: UInt64($0)) }
        plans += Array(repeating: .oversizedLength, count: 5)
        plans += Array(repeating: .helloThenGarbage, count: 5)
        let ports = NIOLockedValueBox([Int: Int]())  // local port → plan index
        let closedByListener = NIOLockedValueBox(Set<Int>())
        let carryOn = DispatchSemaphore(value: 0)
        let crowd = Threads(plans.count) { [plans] index in
            let agent = try TestAgent(tcpLoopbackPort: port)
            ports.withLockedValue { $0[agent.localPort] = index }
            switch plans[index] {
            case .good:
                try agent.send(.hello(ListenerTesting.hello("Good\(index)")))
                for flow in 0 ..< flowCount { try agent.send(Self.flow("\(index)/\(flow)")) }
                carryOn.wait()
                for flow in flowCount ..< 2 * flowCount { try agent.send(Self.flow("\(index)/\(flow)")) }
                agent.close()
                return
            case let plan:
                // The listener may close before every byte is sent.
                try? agent.send(plan.bytes)
            }
            if agent.waitForClose() { closedByListener.withLockedValue { _ = $0.insert(index) } }
        }

        let badEvents = 10 + 5 + 5 * 2
        var events = inbox.collect(count: goodCount * (1 + flowCount) + badEvents, timeout: .seconds(20))
        for _ in 0 ..< goodCount { carryOn.signal() }
        events += inbox.collect(count: goodCount * (flowCount + 1), timeout: .seconds(20))
        XCTAssertEqual(crowd.join(timeout: .seconds(20)), [])

        let planOfPort = ports.withLockedValue { $0 }
        func plan(ofPeer peer: String) -> Int? {
            guard peer.hasPrefix("127.0.0.1:"), let port = Int(peer.dropFirst("127.0.0.1:".count)) else { return nil }
            return planOfPort[port]
        }
        var planOf: [ConnectionID: Int] = [:]
        var paths: [Int: [String]] = [:]
        var reasons: [Int: String?] = [:]
        for event in events {
            switch event {
            case let .connected(id, _, peer): planOf[id] = plan(ofPeer: peer)
            case let .message(id, .flowStarted(log)): paths[planOf[id] ?? -1, default: []].append(log.request.url)
            case let .disconnected(id, reason): reasons[planOf[id] ?? -1] = .some(reason)
            case let .rejected(peer, reason): reasons[plan(ofPeer: peer) ?? -1] = .some(reason)
            default: XCTFail("unexpected \(event)")
            }
        }
        XCTAssertFalse(reasons.keys.contains(-1), "every event names a connection of the crowd")
        for (index, plan) in plans.enumerated() {
            if case .good = plan {
                XCTAssertEqual(paths[index], (0 ..< 2 * flowCount).map { "https://example.com/\(index)/\($0)" }, "good agent \(index)")
                XCTAssertEqual(reasons[index], .some(nil), "good agent \(index) ends with a clean close")
            } else {
                let expected = plan.expectedReason(helloTimeout: timeout)
                XCTAssertEqual(reasons[index], .some(expected), "\(plan)")
                XCTAssertTrue(closedByListener.withLockedValue { $0.contains(index) }, "\(plan) was closed by the listener")
            }
        }
        let growth = ListenerTesting.residentBytes() - residentBefore
        assertResidentGrowth(growth, below: 64 << 20, "resident memory grew by \(growth >> 20) MiB")
    }

    // MARK: Slow connections

    /// A slow loris: a hello dripped one byte every 100 ms would take 15 s.
    /// It holds nobody up, and the hello timeout closes it.
    func testSlowLorisHoldsNobodyUpAndIsClosedAtTheHelloTimeout() throws {
        let (_, inbox, _) = try startListener(helloTimeout: .seconds(1))
        let path = socketPath()
        let residentBefore = ListenerTesting.residentBytes()
        let dripped = NIOLockedValueBox(0)
        let closedByListener = NIOLockedValueBox(false)
        let loris = Threads(1) { _ in
            let agent = try TestAgent(unix: path)
            let frame = try FrameEncoder().encode(.hello(ListenerTesting.hello("Loris")))
            for byte in frame {
                guard (try? agent.send([byte])) != nil else { break }
                dripped.withLockedValue { $0 += 1 }
                paceThread(.milliseconds(100))  // the drip itself
            }
            closedByListener.withLockedValue { $0 = agent.waitForClose() }
        }

        // The loris is connected and part way through its hello.
        XCTAssertTrue(eventually { dripped.withLockedValue { $0 } >= 3 }, "the loris never started dripping")
        let started = ContinuousClock.now
        let good = try TestAgent(unix: socketPath())
        try good.send(.hello(ListenerTesting.hello("Prompt")))
        for flow in 0 ..< 3 { try good.send(Self.flow("prompt/\(flow)")) }
        let prompt = inbox.collect(count: 4, timeout: .seconds(5))
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(700), "the loris held the good agent up")
        guard case .connected(let id, _, _)? = prompt.first else { return XCTFail("\(prompt)") }
        XCTAssertEqual(Array(prompt.dropFirst()), (0 ..< 3).map { .message(id, Self.flow("prompt/\($0)")) })

        XCTAssertEqual(inbox.collect(count: 1, timeout: .seconds(5)), [.rejected(peer: "unix:\(path)", reason: "no hello within 1s")])
        XCTAssertEqual(loris.join(timeout: .seconds(5)), [])
        XCTAssertTrue(closedByListener.withLockedValue { $0 })
        XCTAssertLessThan(dripped.withLockedValue { $0 }, 20, "closed after about ten bytes, not after the whole hello")

        try good.send(Self.flow("prompt/after"))
        XCTAssertEqual(inbox.collect(count: 1), [.message(id, Self.flow("prompt/after"))], "the good agent carries on")
        let growth = ListenerTesting.residentBytes() - residentBefore
        assertResidentGrowth(growth, below: 32 << 20, "resident memory grew by \(growth >> 20) MiB")
    }

    /// The hello timeout runs from accept to the whole hello, however it is
    /// split: a slow hello that is complete in time is accepted. After the
    /// hello there is no timeout; a slow agent costs one connection and the
    /// bytes it has sent so far, and its messages arrive whole.
    func testASlowHelloCompleteInTimeIsAcceptedAndSlowMessagesArriveWhole() throws {
        let (_, inbox, _) = try startListener(helloTimeout: .seconds(5))
        let agent = try TestAgent(unix: socketPath())
        let encoder = FrameEncoder()
        for byte in try encoder.encode(.hello(ListenerTesting.hello("Slow"))) {
            try agent.send([byte])
            paceThread(.milliseconds(5))  // the slow hello itself
        }
        guard case .connected(let id, let hello, _)? = inbox.collect(count: 1).first else { return XCTFail("not accepted") }
        XCTAssertEqual(hello.appName, "Slow")
        for byte in try encoder.encode(Self.flow("slow")) {
            try agent.send([byte])
            paceThread(.milliseconds(2))  // the slow message itself
        }
        XCTAssertEqual(inbox.collect(count: 1), [.message(id, Self.flow("slow"))])
    }

    // MARK: Helpers

    /// The same message for the same path, so that what was sent can be
    /// compared with what arrived.
    private static func flow(_ path: String) -> Message {
        .flowStarted(NetworkLog(
            id: FlowID(UUID(uuid: Self.uuidBytes(path))),
            request: Request(method: "GET", url: "https://example.com/\(path)"),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))
        ))
    }

    private static func uuidBytes(_ text: String) -> uuid_t {
        var bytes = [UInt8](repeating: 0, count: 16)
        for (index, byte) in text.utf8.enumerated() { bytes[index % 16] ^= byte &+ UInt8(truncatingIfNeeded: index) }
        return (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])
    }
}

/// What one connection of the hostile crowd sends.
private enum Hostile: CustomStringConvertible, Sendable {
    case good
    /// A kibibyte of noise, the same for the same seed.
    case randomBytes(seed: UInt64)
    /// A length prefix just under 2 GiB.
    case oversizedLength
    /// A valid hello, then a frame that is not JSON.
    case helloThenGarbage

    var bytes: Data {
        switch self {
        case .good:
            return Data()
        case .randomBytes(let seed):
            var generator = SplitMix(seed: seed)
            return Data((0 ..< 1024).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        case .oversizedLength:
            return Data([0x7F, 0xFF, 0xFF, 0xFF]) + Data("{}".utf8)
        case .helloThenGarbage:
            // Only fails if the fixed hello cannot be encoded, which would fail every test.
            let hello = (try? FrameEncoder().encode(.hello(ListenerTesting.hello("Garbage")))) ?? Data()
            return hello + FrameEncoder.frame(payload: Data("this is not json".utf8))
        }
    }

    /// What the listener must give as the reason: the decoder's error for
    /// these bytes, or the hello timeout when they are valid or incomplete.
    func expectedReason(helloTimeout: Duration) -> String {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: bytes)
        do {
            while try decoder.next() != nil {}
        } catch {
            return error.description
        }
        return "no hello within \(helloTimeout.secondsText)"
    }

    var description: String {
        switch self {
        case .good: "good agent"
        case .randomBytes(let seed): "random bytes (seed \(seed))"
        case .oversizedLength: "oversized length"
        case .helloThenGarbage: "hello then garbage"
        }
    }
}

/// Threads that start their work together, once all exist, so that it
/// really is at once; errors they throw are collected.
private final class Threads: Sendable {
    private let done = DispatchGroup()
    private let errors = NIOLockedValueBox([String]())

    init(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) {
        let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        for index in 0 ..< count {
            done.enter()
            Thread.detachNewThread { [done, errors] in
                ready.signal()
                go.wait()
                do {
                    try body(index)
                } catch {
                    errors.withLockedValue { $0.append("thread \(index): \(error)") }
                }
                done.leave()
            }
        }
        for _ in 0 ..< count { ready.wait() }
        for _ in 0 ..< count { go.signal() }
    }

    /// Waits for every thread; the errors they threw, or a timeout.
    func join(timeout: Duration) -> [String] {
        guard done.wait(timeout: .now() + .milliseconds(Int(timeout.nanoseconds / 1_000_000))) == .success else {
            return ["threads still running after \(timeout)"]
        }
        return errors.withLockedValue { $0 }
    }
}

/// Resident-memory bounds, except under AddressSanitizer (scripts/sanitizers.sh
/// sets ASAN_OPTIONS), whose quarantine keeps freed memory resident on purpose.
func assertResidentGrowth(_ growth: Int, below limit: Int, _ message: @autoclosure () -> String,
                          file: StaticString = #filePath, line: UInt = #line) {
    guard ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil else { return }
    XCTAssertLessThan(growth, limit, message(), file: file, line: line)
}
