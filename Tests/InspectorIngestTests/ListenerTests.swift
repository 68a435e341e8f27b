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

final class ListenerTests: ListenerTestCase {
    // MARK: Helpers

    private func collect(_ inbox: Inbox, count: Int, timeout: Duration = .seconds(5)) -> [InboxEvent] {
        inbox.collect(count: count, timeout: timeout)
    }

    private func hello(_ app: String = "Demo", token: String? = nil, version: Int = Wire.protocolVersion) -> Hello {
        ListenerTesting.hello(app, token: token, version: version)
    }

    private var flows: [String: Message] = [:]

    /// The same message for the same path, so that what was sent can be
    /// compared with what arrived.
    private func flowStarted(_ path: String) -> Message {
        if let message = flows[path] { return message }
        let message = Message.flowStarted(NetworkLog(
            request: Request(method: "GET", url: "https://example.com/\(path)"),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))
        ))
        flows[path] = message
        return message
    }

    private func connectionID(in event: InboxEvent?, file: StaticString = #filePath, line: UInt = #line) -> ConnectionID? {
        guard case .connected(let id, _, _)? = event else {
            XCTFail("expected .connected, got \(String(describing: event))", file: file, line: line)
            return nil
        }
        return id
    }

    private func assertRejected(
        _ events: [InboxEvent], containing text: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard events.count == 1, case .rejected(_, let reason) = events[0] else {
            XCTFail("expected one .rejected, got \(events)", file: file, line: line)
            return
        }
        XCTAssertTrue(reason.contains(text), "'\(reason)' should contain '\(text)'", file: file, line: line)
    }

    // MARK: Messages

    func testHelloAndFlowEventsArriveInOrderWithTheirConnection() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        let messages = [flowStarted("a"), .status(AgentStatus(droppedEvents: 3)), flowStarted("b")]
        try agent.send(.hello(hello()))
        for message in messages { try agent.send(message) }

        let events = collect(inbox, count: 4)
        let id = try XCTUnwrap(connectionID(in: events.first))
        XCTAssertEqual(events, [.connected(id, hello(), peer: "unix:\(socketPath())")] + messages.map { .message(id, $0) })

        agent.close()
        XCTAssertEqual(collect(inbox, count: 1), [.disconnected(id, reason: nil)])
    }

    /// Receipts: 0 as soon as the hello is accepted, then the cumulative
    /// count of flow events (not status) the UI acknowledges, each agent its own.
    func testEachAgentGetsReceiptsForTheFlowEventsTheUITook() throws {
        let (_, inbox, _) = try startListener()
        let first = try TestAgent(unix: socketPath())
        let second = try TestAgent(unix: socketPath())
        try first.send(.hello(hello("First")))
        XCTAssertEqual(try first.receipts { !$0.isEmpty }, [0], "a receipt for 0 once the hello is accepted")
        try second.send(.hello(hello("Second")))
        XCTAssertEqual(try second.receipts { !$0.isEmpty }, [0])
        for path in ["a", "b"] { try first.send(flowStarted(path)) }
        try first.send(.status(AgentStatus(droppedEvents: 1)))
        try second.send(flowStarted("c"))
        let events = collect(inbox, count: 6)
        let taken = Inbox.takenEvents(in: events)
        XCTAssertEqual(taken.values.sorted(), [1, 2], "\(taken)")
        inbox.acknowledge(taken)
        XCTAssertEqual(try first.receipts { $0.last == 2 }.last, 2)
        XCTAssertEqual(try second.receipts { $0.last == 1 }.last, 1)
        try first.send(flowStarted("d"))
        inbox.acknowledge(Inbox.takenEvents(in: collect(inbox, count: 1)))
        XCTAssertEqual(try first.receipts { $0.last == 3 }.last, 3, "receipts are cumulative")
    }

    /// Rules go to an agent that accepts control, before its first receipt,
    /// and to no other; a replay goes to the one connection it names.
    func testRulesReachOnlyAgentsThatAcceptControlAndAReplayOnlyItsAgent() throws {
        let rules = [try TrafficRule(.mapRemote, spec: "|a.example|b.example")]
        let (_, inbox, _) = try startListener(rules: rules)
        let controlled = try TestAgent(unix: socketPath())
        let plain = try TestAgent(unix: socketPath())
        var controlHello = hello("Controlled")
        controlHello.acceptsControl = true
        try controlled.send(.hello(controlHello))
        XCTAssertEqual(try controlled.viewerMessages { $0.count >= 2 }, [.rules(rules), .receipt(Receipt(events: 0))])
        try plain.send(.hello(hello("Plain")))
        XCTAssertEqual(try plain.viewerMessages { !$0.isEmpty }, [.receipt(Receipt(events: 0))])
        guard case .connected(let connection, _, _)? = collect(inbox, count: 2).first else { return XCTFail("no connection") }

        let id = FlowID()
        XCTAssertTrue(inbox.send(.replay(id), to: connection))
        XCTAssertEqual(try controlled.viewerMessages { !$0.isEmpty }, [.replay(id)])
        XCTAssertEqual(try plain.viewerMessages { _ in false }.filter { if case .replay = $0 { true } else { false } }, [])
    }

    /// Rules replaced while running (the rules view) reach every connected
    /// agent that accepts control at once, an empty list included, and an
    /// agent that connects later gets the newest list, not the starting one.
    func testReplacedRulesReachConnectedAgentsNowAndLaterAgentsAtTheirHello() throws {
        let startup = [try TrafficRule(.mapRemote, spec: "|a.example|b.example")]
        let (_, inbox, _) = try startListener(rules: startup)
        var controlHello = hello("Controlled")
        controlHello.acceptsControl = true
        let early = try TestAgent(unix: socketPath())
        try early.send(.hello(controlHello))
        XCTAssertEqual(try early.viewerMessages { $0.count >= 2 }, [.rules(startup), .receipt(Receipt(events: 0))])
        let plain = try TestAgent(unix: socketPath())
        try plain.send(.hello(hello("Plain")))
        XCTAssertEqual(try plain.viewerMessages { !$0.isEmpty }, [.receipt(Receipt(events: 0))])
        XCTAssertEqual(inbox.collect(count: 2).count, 2)

        let replaced = [try TrafficRule(.modifyHeaders, spec: "/X-Env/staging"), try TrafficRule(.mapRemote, spec: "|c.example|d.example")]
        XCTAssertTrue(inbox.replaceRules(replaced))
        XCTAssertEqual(try early.viewerMessages { !$0.isEmpty }, [.rules(replaced)])

        let late = try TestAgent(unix: socketPath())
        try late.send(.hello(controlHello))
        XCTAssertEqual(try late.viewerMessages { $0.count >= 2 }, [.rules(replaced), .receipt(Receipt(events: 0))],
                       "a later agent gets the rules in force now, once")

        XCTAssertTrue(inbox.replaceRules([]))
        XCTAssertEqual(try early.viewerMessages { !$0.isEmpty }, [.rules([])], "an empty list removes the rules")
        XCTAssertEqual(try late.viewerMessages { !$0.isEmpty }, [.rules([])])
        XCTAssertEqual(try plain.viewerMessages { _ in false }.filter { if case .rules = $0 { true } else { false } }, [],
                       "an agent that does not accept control never gets rules")
        let last = try TestAgent(unix: socketPath())
        try last.send(.hello(controlHello))
        XCTAssertEqual(try last.viewerMessages { !$0.isEmpty }, [.receipt(Receipt(events: 0))], "no rules in force: none sent")
    }

    func testMessagesSplitAcrossWritesAndPackedInOneWrite() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        let encoder = FrameEncoder()
        var bytes = try encoder.encode(.hello(hello()))
        for index in 0 ..< 20 { bytes += try encoder.encode(flowStarted("\(index)")) }
        // One byte, then the rest in odd-sized pieces.
        try agent.send(bytes.prefix(1))
        var offset = 1
        while offset < bytes.count {
            let end = min(offset + 37, bytes.count)
            try agent.send(bytes[offset ..< end])
            offset = end
        }
        let events = collect(inbox, count: 21)
        let id = try XCTUnwrap(connectionID(in: events.first))
        XCTAssertEqual(Array(events.dropFirst()), (0 ..< 20).map { .message(id, flowStarted("\($0)")) })
    }

    func testTwoAgentsAtOnceKeepTheirOwnIdentityAndOrder() throws {
        let (_, inbox, _) = try startListener()
        let first = try TestAgent(unix: socketPath())
        try first.send(.hello(hello("First")))
        let firstID = try XCTUnwrap(connectionID(in: collect(inbox, count: 1).first))
        let second = try TestAgent(unix: socketPath())
        try second.send(.hello(hello("Second")))
        let secondID = try XCTUnwrap(connectionID(in: collect(inbox, count: 1).first))
        XCTAssertNotEqual(firstID, secondID)

        for index in 0 ..< 10 {
            try first.send(flowStarted("first/\(index)"))
            try second.send(flowStarted("second/\(index)"))
        }
        let events = collect(inbox, count: 20)
        XCTAssertEqual(events.filter { if case .message(firstID, _) = $0 { true } else { false } },
                       (0 ..< 10).map { .message(firstID, flowStarted("first/\($0)")) })
        XCTAssertEqual(events.filter { if case .message(secondID, _) = $0 { true } else { false } },
                       (0 ..< 10).map { .message(secondID, flowStarted("second/\($0)")) })
    }

    func testManyAgentsAtOnceDeliverEverythingInOrder() throws {
        let (_, inbox, _) = try startListener()
        let agentCount = 20, flowCount = 50
        let agents = try (0 ..< agentCount).map { index in
            let agent = try TestAgent(unix: socketPath())
            try agent.send(.hello(hello("App\(index)")))
            return agent
        }
        for flow in 0 ..< flowCount {
            for (index, agent) in agents.enumerated() { try agent.send(flowStarted("\(index)/\(flow)")) }
        }
        let events = collect(inbox, count: agentCount * (flowCount + 1), timeout: .seconds(20))
        var apps: [ConnectionID: String] = [:]
        var paths: [ConnectionID: [String]] = [:]
        for event in events {
            switch event {
            case let .connected(id, hello, _): apps[id] = hello.appName
            case let .message(id, .flowStarted(log)): paths[id, default: []].append(log.request.url)
            default: XCTFail("unexpected \(event)")
            }
        }
        XCTAssertEqual(apps.count, agentCount)
        for (id, app) in apps {
            let index = app.dropFirst("App".count)
            XCTAssertEqual(paths[id], (0 ..< flowCount).map { "https://example.com/\(index)/\($0)" }, app)
        }
    }

    // MARK: Bad connections

    func testGarbagePayloadIsRejectedAndOtherConnectionsCarryOn() throws {
        let (_, inbox, _) = try startListener()
        let good = try TestAgent(unix: socketPath())
        try good.send(.hello(hello()))
        let goodID = try XCTUnwrap(connectionID(in: collect(inbox, count: 1).first))

        let bad = try TestAgent(unix: socketPath())
        try bad.send(FrameEncoder.frame(payload: Data("this is not json".utf8)))
        assertRejected(collect(inbox, count: 1), containing: "malformed payload")
        XCTAssertTrue(bad.waitForClose(), "the garbage connection is closed")

        try good.send(flowStarted("still"))
        XCTAssertEqual(collect(inbox, count: 1), [.message(goodID, flowStarted("still"))])
        let later = try TestAgent(unix: socketPath())
        try later.send(.hello(hello("Later")))
        XCTAssertNotNil(connectionID(in: collect(inbox, count: 1).first))
    }

    func testOversizedLengthIsRejectedAsFrameTooLarge() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(Data([0xFF, 0xFF, 0xFF, 0xFF, 0x7B]))
        assertRejected(collect(inbox, count: 1), containing: "frame too large")
        XCTAssertTrue(agent.waitForClose())
    }

    func testFrameAboveTheConfiguredMaximumIsRejected() throws {
        var configuration = ListenerConfiguration(endpoints: [.unix(path: socketPath())], maximumFrameSize: 64)
        configuration.helloTimeout = nil
        let inbox = Inbox()
        let listener = InspectorListener(configuration: configuration, inbox: inbox)
        listeners.append(listener)
        _ = try listener.start()
        _ = collect(inbox, count: 1)
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello(String(repeating: "x", count: 100))))
        assertRejected(collect(inbox, count: 1), containing: "limit is 64")
    }

    func testHTTPRequestInsteadOfFramesIsRejected() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(Data("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        assertRejected(collect(inbox, count: 1), containing: "frame too large")
    }

    func testUnsupportedProtocolVersionIsRejected() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello(version: 99)))
        assertRejected(collect(inbox, count: 1), containing: "unsupported protocol version 99")
    }

    func testMessageBeforeHelloIsRejected() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(flowStarted("early"))
        assertRejected(collect(inbox, count: 1), containing: "first message must be 'hello'")
    }

    func testConnectionWithoutHelloInTimeIsClosed() throws {
        let (_, inbox, _) = try startListener(helloTimeout: .milliseconds(200))
        let agent = try TestAgent(unix: socketPath())
        assertRejected(collect(inbox, count: 1), containing: "no hello within 0.2s")
        XCTAssertTrue(agent.waitForClose())
    }

    func testConnectionClosedWithoutABytePostsNothing() throws {
        let (_, inbox, _) = try startListener()
        try TestAgent(unix: socketPath()).close()
        XCTAssertEqual(inbox.wait(timeout: .milliseconds(300)), [])
    }

    // MARK: Tokens

    func testWrongOrMissingTokenIsRejected() throws {
        let (_, inbox, _) = try startListener(token: "s3cret")
        let wrong = try TestAgent(unix: socketPath())
        try wrong.send(.hello(hello(token: "guess")))
        XCTAssertEqual(collect(inbox, count: 1), [.rejected(peer: "unix:\(socketPath())", reason: "wrong token")])
        XCTAssertTrue(wrong.waitForClose())

        let missing = try TestAgent(unix: socketPath())
        try missing.send(.hello(hello()))
        assertRejected(collect(inbox, count: 1), containing: "wrong token")

        let prefix = try TestAgent(unix: socketPath())
        try prefix.send(.hello(hello(token: "s3cre")))
        assertRejected(collect(inbox, count: 1), containing: "wrong token")
    }

    func testRightTokenIsAccepted() throws {
        let (_, inbox, _) = try startListener(token: "s3cret")
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello(token: "s3cret")))
        try agent.send(flowStarted("x"))
        let events = collect(inbox, count: 2)
        let id = try XCTUnwrap(connectionID(in: events.first))
        XCTAssertEqual(events.last, .message(id, flowStarted("x")))
    }

    func testConstantTimeComparison() {
        XCTAssertTrue(AgentConnectionState.constantTimeEquals("abc", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals("abd", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals("ab", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals("abcd", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals(nil, "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals("", "abc"))
    }

    // MARK: Disconnect reasons

    func testStreamEndingInsideAFrameIsTheDisconnectReason() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello()))
        let id = try XCTUnwrap(connectionID(in: collect(inbox, count: 1).first))
        try agent.send(try FrameEncoder().encode(flowStarted("cut")).prefix(10))
        agent.close()
        guard case .disconnected(id, let reason?)? = collect(inbox, count: 1).first else {
            return XCTFail("expected a disconnect with a reason")
        }
        XCTAssertTrue(reason.contains("stream ended inside a frame"), reason)
    }

    func testGarbageAfterHelloDisconnectsWithTheWireError() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello()))
        let id = try XCTUnwrap(connectionID(in: collect(inbox, count: 1).first))
        try agent.send(FrameEncoder.frame(payload: Data(#"{"type":"flowStarted"}"#.utf8)))
        guard case .disconnected(id, let reason?)? = collect(inbox, count: 1).first else {
            return XCTFail("expected a disconnect with a reason")
        }
        XCTAssertTrue(reason.hasPrefix("malformed payload"), reason)
        XCTAssertTrue(agent.waitForClose())
    }

    func testShutdownDisconnectsAgentsAndSaysWhy() throws {
        let (listener, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello()))
        let id = try XCTUnwrap(connectionID(in: collect(inbox, count: 1).first))
        listener.shutdown()
        XCTAssertEqual(collect(inbox, count: 1), [.disconnected(id, reason: "inspector shut down")])
        XCTAssertTrue(agent.waitForClose())
    }

    // MARK: The socket file

    func testSocketFileIsPrivateWhateverTheUmask() throws {
        let previous = umask(0)
        defer { umask(previous) }
        _ = try startListener()
        var status = stat()
        XCTAssertEqual(lstat(socketPath(), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
        XCTAssertEqual(status.st_mode & mode_t(S_IFMT), mode_t(S_IFSOCK))
        XCTAssertEqual(umask(previous), 0, "the process umask is restored")
    }

    func testStaleSocketFileIsReplaced() throws {
        try makeStaleSocket(at: socketPath())
        XCTAssertEqual(try UnixSocketFile.inspect(socketPath()), .stale)
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello()))
        XCTAssertNotNil(connectionID(in: collect(inbox, count: 1).first))
    }

    func testLiveListenerIsAnErrorNotATakeover() throws {
        let (_, inbox, _) = try startListener()
        let other = InspectorListener(configuration: ListenerConfiguration(endpoints: [.unix(path: socketPath())]), inbox: Inbox())
        listeners.append(other)
        XCTAssertThrowsError(try other.start()) { error in
            XCTAssertEqual(error as? ListenerError, .alreadyListening(path: socketPath()))
            XCTAssertTrue("\(error)".contains(socketPath()))
        }
        // The first one still owns the socket, and the probe left no trace.
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello()))
        XCTAssertNotNil(connectionID(in: collect(inbox, count: 1).first))
    }

    func testSomethingOtherThanASocketIsLeftAlone() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: socketPath(), contents: Data("keep me".utf8)))
        let listener = InspectorListener(configuration: ListenerConfiguration(endpoints: [.unix(path: socketPath())]), inbox: Inbox())
        listeners.append(listener)
        XCTAssertThrowsError(try listener.start()) { error in
            XCTAssertEqual(error as? ListenerError, .notASocket(path: socketPath()))
        }
        XCTAssertEqual(FileManager.default.contents(atPath: socketPath()), Data("keep me".utf8))
    }

    func testSocketFileIsRemovedOnShutdownAndShutdownIsIdempotent() throws {
        let (listener, _, _) = try startListener()
        XCTAssertTrue(FileManager.default.fileExists(atPath: socketPath()))
        listener.shutdown()
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath()))
        listener.shutdown()
        XCTAssertThrowsError(try TestAgent(unix: socketPath()), "nobody listens any more")
    }

    func testShutdownLeavesASocketFileThatIsNoLongerOurs() throws {
        let (listener, _, _) = try startListener()
        XCTAssertEqual(unlink(socketPath()), 0)
        try makeStaleSocket(at: socketPath())
        listener.shutdown()
        XCTAssertTrue(FileManager.default.fileExists(atPath: socketPath()))
    }

    func testListenerCanStartAgainAfterShutdown() throws {
        let (listener, inbox, _) = try startListener()
        listener.shutdown()
        XCTAssertEqual(try listener.start(), [.unix(path: socketPath())])
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(hello()))
        let events = collect(inbox, count: 2)
        XCTAssertEqual(events.first, .listening(.unix(path: socketPath())))
        XCTAssertNotNil(connectionID(in: events.last))
    }

    func testStartingTwiceIsAnError() throws {
        let (listener, _, _) = try startListener()
        XCTAssertThrowsError(try listener.start()) { XCTAssertEqual($0 as? ListenerError, .alreadyStarted) }
    }

    // MARK: TCP and configuration

    func testTCPPortZeroReportsTheRealPort() throws {
        let (_, inbox, bound) = try startListener([.tcp(host: "127.0.0.1", port: 0)])
        guard case .tcp("127.0.0.1", let port)? = bound.first else { return XCTFail("bound \(bound)") }
        XCTAssertNotEqual(port, 0)
        let agent = try TestAgent(tcpLoopbackPort: port)
        try agent.send(.hello(hello()))
        guard case .connected(_, _, let peer)? = collect(inbox, count: 1).first else { return XCTFail("no connection") }
        XCTAssertTrue(peer.hasPrefix("127.0.0.1:"), peer)
    }

    func testUnixAndTCPTogether() throws {
        let (_, inbox, bound) = try startListener([.unix(path: socketPath()), .tcp(host: "localhost", port: 0)])
        XCTAssertEqual(bound.count, 2)
        guard case .tcp(_, let port) = bound[1] else { return XCTFail("bound \(bound)") }
        let unixAgent = try TestAgent(unix: socketPath())
        try unixAgent.send(.hello(hello("Unix")))
        let tcpAgent = try TestAgent(tcpLoopbackPort: port)
        try tcpAgent.send(.hello(hello("TCP")))
        let apps = collect(inbox, count: 2).compactMap { event -> String? in
            if case .connected(_, let hello, _) = event { hello.appName } else { nil }
        }
        XCTAssertEqual(Set(apps), ["Unix", "TCP"])
    }

    func testNonLoopbackTCPNeedsAToken() throws {
        let open = ListenerConfiguration(endpoints: [.tcp(host: "0.0.0.0", port: 9123)])
        XCTAssertThrowsError(try open.validate()) {
            XCTAssertEqual($0 as? ListenerError, .tokenRequired(.tcp(host: "0.0.0.0", port: 9123)))
            XCTAssertTrue("\($0)".contains("--token"))
        }
        XCTAssertThrowsError(try ListenerConfiguration(endpoints: [.tcp(host: "192.168.1.5", port: 1)], token: "").validate())
        XCTAssertNoThrow(try ListenerConfiguration(endpoints: [.tcp(host: "0.0.0.0", port: 9123)], token: "t").validate())
        XCTAssertNoThrow(try ListenerConfiguration(endpoints: [.tcp(host: "127.0.0.1", port: 9123)]).validate())
        XCTAssertNoThrow(try ListenerConfiguration(endpoints: [.tcp(host: "::1", port: 9123)]).validate())
        let listener = InspectorListener(configuration: open, inbox: Inbox())
        XCTAssertThrowsError(try listener.start(), "start validates before binding")
    }

    func testBindFailureNamesTheEndpointAndLeavesNothingBound() throws {
        let missingDirectory = Endpoint.unix(path: directory + "/no/such/dir.sock")
        let listener = InspectorListener(
            configuration: ListenerConfiguration(endpoints: [.unix(path: socketPath()), missingDirectory]), inbox: Inbox()
        )
        listeners.append(listener)
        XCTAssertThrowsError(try listener.start()) { error in
            guard case .bindFailed(missingDirectory, let reason)? = error as? ListenerError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(reason, "No such file or directory")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath()), "the first endpoint was unbound again")
    }

    func testTCPAddressInUseIsABindFailure() throws {
        let (_, _, bound) = try startListener([.tcp(host: "127.0.0.1", port: 0)])
        let listener = InspectorListener(configuration: ListenerConfiguration(endpoints: bound), inbox: Inbox())
        listeners.append(listener)
        XCTAssertThrowsError(try listener.start()) { error in
            guard case .bindFailed(_, let reason)? = error as? ListenerError else { return XCTFail("\(error)") }
            XCTAssertEqual(reason, "Address already in use")
        }
    }

    // MARK: Inbox

    func testInboxWakeDescriptorIsReadableExactlyWhileEventsWait() {
        let inbox = Inbox()
        XCTAssertFalse(isReadable(inbox.wakeFileDescriptor))
        inbox.post(.rejected(peer: "p", reason: "one"))
        inbox.post(.rejected(peer: "p", reason: "two"))
        XCTAssertTrue(isReadable(inbox.wakeFileDescriptor))
        XCTAssertEqual(inbox.drain().count, 2)
        XCTAssertFalse(isReadable(inbox.wakeFileDescriptor))
        XCTAssertEqual(inbox.drain(), [])
    }

    func testInboxTakesPostsFromManyThreads() {
        let inbox = Inbox()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0 ..< 1000 { inbox.post(.rejected(peer: "\(thread)", reason: "\(index)")) }
        }
        let events = inbox.drain()
        XCTAssertEqual(events.count, 8000)
        for thread in 0 ..< 8 {
            let reasons = events.compactMap { event -> String? in
                if case .rejected("\(thread)", let reason) = event { reason } else { nil }
            }
            XCTAssertEqual(reasons, (0 ..< 1000).map(String.init), "each thread's posts stay in order")
        }
        XCTAssertFalse(isReadable(inbox.wakeFileDescriptor))
    }

    func testInboxWaitTimesOutEmptyAndWakesForAPostFromAnotherThread() {
        let inbox = Inbox()
        let start = ContinuousClock.now
        XCTAssertEqual(inbox.wait(timeout: .milliseconds(100)), [])
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(100))

        let event = InboxEvent.rejected(peer: "p", reason: "late")
        Thread.detachNewThread {
            // Not a wait for a condition: the post is meant to come while
            // `wait` blocks, and nothing is asserted on the delay.
            paceThread(.milliseconds(50))
            inbox.post(event)
        }
        XCTAssertEqual(inbox.wait(timeout: .seconds(5)), [event])
    }

    func testInboxRefusesOffersAtEitherBoundAndCallsBackOnceDrained() {
        let inbox = Inbox(limits: Inbox.Limits(maximumEvents: 3, maximumBytes: 100))
        let callbacks = NIOLockedValueBox(0)
        inbox.setSpaceHandler { callbacks.withLockedValue { $0 += 1 } }
        let event = InboxEvent.rejected(peer: "p", reason: "r")
        XCTAssertTrue(inbox.offer(event, bytes: 10))
        XCTAssertTrue(inbox.offer(event, bytes: 10))
        XCTAssertTrue(inbox.offer(event, bytes: 10))
        XCTAssertFalse(inbox.offer(event, bytes: 10), "three events are the bound")
        inbox.post(event)
        XCTAssertEqual(inbox.count, 4, "post is not bounded: it is for the listener's own few events")
        XCTAssertEqual(inbox.byteCount, 30)
        XCTAssertEqual(callbacks.withLockedValue { $0 }, 0)
        XCTAssertEqual(inbox.drain().count, 4)
        XCTAssertEqual(callbacks.withLockedValue { $0 }, 1, "a refused offer is answered by the next drain")

        XCTAssertTrue(inbox.offer(event, bytes: 150), "one frame may take it past the byte bound")
        XCTAssertFalse(inbox.offer(event, bytes: 1))
        XCTAssertEqual(inbox.byteCount, 150)
        XCTAssertEqual(inbox.drain().count, 1)
        XCTAssertEqual(inbox.drain(), [])
        XCTAssertEqual(callbacks.withLockedValue { $0 }, 2, "once per drain that follows a refusal")
        XCTAssertEqual(inbox.byteCount, 0)

        inbox.setSpaceHandler(nil)
        for _ in 0 ..< 4 { _ = inbox.offer(event, bytes: 1) }
        _ = inbox.drain()
        XCTAssertEqual(callbacks.withLockedValue { $0 }, 2, "an unhooked handler is not called")
    }

    private func isReadable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    /// A socket file nobody listens on: bound, then closed without unlinking.
    private func makeStaleSocket(at path: String) throws {
        let descriptor = socket(AF_UNIX, UnixSocketFile.socketType(nonBlocking: false), 0)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        XCTAssertEqual(UnixSocketFile.withAddress(path) { bind(descriptor, $0, $1) }, 0, String(cString: strerror(errno)))
    }
}

/// A blocking agent on a real socket, writing wire-protocol frames. Reads
/// time out, so a test can never hang on it.
final class TestAgent {
    private var descriptor: Int32

    struct SocketError: Error, CustomStringConvertible {
        var description: String
    }

    init(unix path: String) throws {
        descriptor = socket(AF_UNIX, UnixSocketFile.socketType(nonBlocking: false), 0)
        guard UnixSocketFile.withAddress(path, { connect(descriptor, $0, $1) }) == 0 else {
            let error = SocketError(description: "connect \(path): \(lastErrorText())")
            closeDescriptor(descriptor)
            throw error
        }
        setReceiveTimeout()
    }

    init(tcpLoopbackPort port: Int) throws {
        descriptor = socket(AF_INET, UnixSocketFile.socketType(nonBlocking: false), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = SocketError(description: "connect 127.0.0.1:\(port): \(lastErrorText())")
            closeDescriptor(descriptor)
            throw error
        }
        setReceiveTimeout()
    }

    deinit { close() }

    func send(_ message: Message) throws {
        try send(try FrameEncoder().encode(message))
    }

    func send<Bytes: DataProtocol>(_ bytes: Bytes) throws {
        let data = Data(bytes)
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = sendWithoutSignal(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { throw SocketError(description: "send: \(lastErrorText())") }
                offset += written
            }
        }
    }

    /// Whether the other side closes the connection within about five
    /// seconds (receipts it sends meanwhile are read and kept).
    func waitForClose() -> Bool {
        let deadline = Date().addingTimeInterval(5)
        var byte: UInt8 = 0
        while Date() < deadline {
            let count = recv(descriptor, &byte, 1, 0)
            if count > 0 { receiptDecoder.append(contentsOf: [byte]) }
            if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { return false }
        }
        return false
    }

    private var receiptDecoder = ReceiptDecoder()
    private var viewerDecoder = ViewerMessageDecoder(maximumFrameSize: 1 << 24, acceptsRules: true)

    /// Everything the listener has sent, as an agent that accepts control
    /// reads it, until `done` holds or about five seconds pass.
    func viewerMessages(until done: ([ViewerMessage]) -> Bool) throws -> [ViewerMessage] {
        var messages: [ViewerMessage] = []
        let deadline = Date().addingTimeInterval(5)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            while let message = try viewerDecoder.next() { messages.append(message) }
            if done(messages) || Date() >= deadline { return messages }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { viewerDecoder.append(contentsOf: buffer[0 ..< count]) }
            if count == 0 { return messages }
        }
    }

    /// The receipts the listener has sent, read until `until` holds for
    /// them or about five seconds pass.
    func receipts(until done: ([Int]) -> Bool) throws -> [Int] {
        var counts: [Int] = []
        let deadline = Date().addingTimeInterval(5)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            while let receipt = try receiptDecoder.next() { counts.append(receipt.events) }
            if done(counts) || Date() >= deadline { return counts }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { receiptDecoder.append(contentsOf: buffer[0 ..< count]) }
            if count == 0 { return counts }
        }
    }

    /// The local port of a TCP connection, by which the listener names its peer.
    var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Closes as an agent does: stops writing, reads until the listener
    /// closes (receipts left unread would make the close a reset), then closes.
    func close() {
        guard descriptor >= 0 else { return }
        shutdown(descriptor, Int32(SHUT_WR))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(1)
        while Date() < deadline {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            break
        }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    /// Closes at once, whatever is unread (a crashing agent).
    func abort() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    private func setReceiveTimeout() {
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

// Free functions, because TestAgent's own close() and send(_:) hide the C ones.
private func closeDescriptor(_ descriptor: Int32) {
    close(descriptor)
}

private func sendWithoutSignal(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
}
