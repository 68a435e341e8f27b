import Foundation
@testable import InspectorIngest
import WireProtocol
import XCTest

/// One agent connection's lifecycle, decided by ``AgentConnectionState``
/// and driven here without a socket: the hello and its token, the
/// handshake, back-pressure from a full inbox, closing, shutdown, receipts,
/// and the one last event each connection ends with.
final class AgentConnectionStateTests: XCTestCase {
    /// Plays the handler's part: carries out each step, with an inbox that
    /// takes `capacity` events until drained and identifiers counted from 1.
    private struct Connection {
        var state: AgentConnectionState
        var capacity = Int.max
        var inbox: [InboxEvent] = []
        var handshakes: [AgentConnectionState.Handshake] = []
        var channelCloses = 0
        var nextID: UInt64 = 1

        init(token: String? = nil, maximumFrameSize: Int = Wire.defaultMaximumFrameSize) {
            state = AgentConnectionState(token: token, maximumFrameSize: maximumFrameSize)
            state.opened(peer: "unix:/tmp/ni.sock")
        }

        mutating func receive(_ messages: Message...) throws {
            var bytes = Data()
            for message in messages { bytes += try FrameEncoder().encode(message) }
            receive(bytes)
        }

        mutating func receive(_ bytes: Data) {
            if state.received(bytes) == .deliver { deliver() }
        }

        mutating func deliver(isShuttingDown: Bool = false) {
            while true {
                switch state.nextStep(isShuttingDown: isShuttingDown) {
                case .offer(let event, let bytes):
                    guard inbox.count < capacity else { return state.refused(event, bytes: bytes) }
                    inbox.append(event)
                case .accept(let hello, let bytes):
                    handshakes.append(state.accept(hello, bytes: bytes, as: ConnectionID(nextID)))
                    nextID += 1
                case .close:
                    channelCloses += 1
                case .idle:
                    return
                }
            }
        }

        /// The socket closed; what the handler does next, done.
        mutating func socketClosed(isShuttingDown: Bool = false) {
            switch state.socketClosed(isShuttingDown: isShuttingDown) {
            case .deliver: deliver(isShuttingDown: isShuttingDown)
            case .wait: break
            case .post(let events): inbox += events
            }
        }

        /// The UI drains the inbox, and the connection resumes.
        mutating func drainAndResume() -> [InboxEvent] {
            defer {
                state.resume()
                deliver()
            }
            let taken = inbox
            inbox = []
            return taken
        }
    }

    private static let peer = "unix:/tmp/ni.sock"
    private let first = ConnectionID(1)

    private func hello(version: Int = Wire.protocolVersion, token: String? = nil, acceptsControl: Bool = false,
                       highest: Int? = nil) -> Hello {
        Hello(protocolVersion: version, agentName: "TestAgent", agentVersion: "1.0", appName: "Demo", processID: 42,
              hostName: "test", token: token, acceptsControl: acceptsControl, highestProtocolVersion: highest)
    }

    private var flows: [String: Message] = [:]

    /// The same message for the same path, so what was received can be compared with what was sent.
    private func flow(_ path: String) -> Message {
        if let message = flows[path] { return message }
        let message = Message.flowStarted(NetworkLog(request: Request(method: "GET", url: "https://example.com/\(path)"),
                                                     timing: Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))))
        flows[path] = message
        return message
    }

    private func rejection(_ events: [InboxEvent], file: StaticString = #filePath, line: UInt = #line) -> String? {
        guard events.count == 1, case .rejected(Self.peer, let reason) = events[0] else {
            XCTFail("expected one rejection, got \(events)", file: file, line: line)
            return nil
        }
        return reason
    }

    // MARK: The hello

    func testAHelloIsAcceptedAndItsConnectionsMessagesFollowInOrder() throws {
        var connection = Connection()
        try connection.receive(.hello(hello()), flow("a"), flow("b"))
        XCTAssertEqual(connection.inbox, [.connected(first, hello(), peer: Self.peer), .message(first, flow("a")), .message(first, flow("b"))])
        XCTAssertEqual(connection.state.connection, first)
    }

    func testAHelloDrippedByteByByteIsAcceptedOnlyWithItsLastByte() throws {
        var connection = Connection()
        let frame = try FrameEncoder().encode(.hello(hello()))
        for byte in frame.dropLast() { connection.receive(Data([byte])) }
        XCTAssertEqual(connection.handshakes, [])
        connection.receive(Data([frame.last!]))
        XCTAssertEqual(connection.inbox, [.connected(first, hello(), peer: Self.peer)])
    }

    func testTheHandshakeAsksForVersion2OnlyOfAnAgentThatOffersItAndSendsRulesOnlyToOneThatAcceptsControl() throws {
        var older = Connection()
        try older.receive(.hello(hello()))
        var newer = Connection()
        try newer.receive(.hello(hello(acceptsControl: true, highest: 7)))
        XCTAssertEqual(older.handshakes, [.init(protocolVersion: nil, sendsRules: false)])
        XCTAssertEqual(newer.handshakes, [.init(protocolVersion: Wire.highestProtocolVersion, sendsRules: true)])
        XCTAssertFalse(older.state.acceptsControl)
        XCTAssertTrue(newer.state.acceptsControl)
    }

    func testAWrongTokenClosesTheConnectionWhichIsRejectedOnceClosedAndWhatFollowsIsIgnored() throws {
        var connection = Connection(token: "s3cret")
        try connection.receive(.hello(hello(token: "guess")))
        XCTAssertEqual(connection.channelCloses, 1)
        XCTAssertEqual(connection.inbox, [], "the rejection waits for the socket to close")
        XCTAssertEqual(connection.state.received(try FrameEncoder().encode(flow("late"))), .wait)
        XCTAssertFalse(connection.state.canWriteToAgent)
        connection.socketClosed()
        XCTAssertEqual(rejection(connection.inbox), "wrong token")
        XCTAssertNil(connection.state.connection)
    }

    func testTheRightTokenIsAccepted() throws {
        var connection = Connection(token: "s3cret")
        try connection.receive(.hello(hello(token: "s3cret")))
        XCTAssertEqual(connection.state.connection, first)
    }

    func testAnUnsupportedVersionIsRejectedWithTheDecodersReason() throws {
        var connection = Connection()
        try connection.receive(.hello(hello(version: 99)))
        XCTAssertEqual(connection.channelCloses, 1)
        connection.socketClosed()
        XCTAssertEqual(rejection(connection.inbox).map { $0.contains("unsupported protocol version 99") }, true)
    }

    func testNoHelloInTimeClosesTheConnectionAndIsItsReason() {
        var connection = Connection()
        XCTAssertEqual(connection.state.helloTimedOut(after: .milliseconds(200), isShuttingDown: false), .closeChannel)
        connection.socketClosed()
        XCTAssertEqual(rejection(connection.inbox), "no hello within 0.2s")
    }

    func testBytesAfterTheHelloDeadlineAreNotDecodedAndTheDeadlineIsTheReason() throws {
        var connection = Connection()
        connection.receive(try FrameEncoder().encode(.hello(hello())).prefix(10))
        XCTAssertEqual(connection.state.helloTimedOut(after: .seconds(10), isShuttingDown: false), .closeChannel)
        XCTAssertEqual(connection.state.received(try FrameEncoder().encode(.hello(hello())).dropFirst(10)), .wait)
        connection.socketClosed()
        XCTAssertEqual(connection.handshakes, [])
        XCTAssertEqual(rejection(connection.inbox), "no hello within 10s")
    }

    func testTheHelloDeadlineDoesNothingOnceTheHelloCame() throws {
        var connection = Connection()
        try connection.receive(.hello(hello()))
        XCTAssertEqual(connection.state.helloTimedOut(after: .seconds(10), isShuttingDown: false), .none)
        XCTAssertTrue(connection.state.canWriteToAgent)
    }

    // MARK: The last event

    func testAConnectionClosedWithoutAByteEndsWithNothing() {
        var connection = Connection()
        connection.socketClosed()
        XCTAssertEqual(connection.inbox, [])
        XCTAssertEqual(connection.state.abandon(), [], "and shutdown adds nothing after")
    }

    func testAConnectionClosedBeforeItsHelloEndedIsRejectedWithTheStreamsFault() throws {
        var connection = Connection()
        connection.receive(try FrameEncoder().encode(.hello(hello())).prefix(10))
        connection.socketClosed()
        XCTAssertEqual(rejection(connection.inbox).map { $0.contains("stream ended inside a frame") }, true)
    }

    func testACleanEndAfterTheHelloIsADisconnectWithoutReason() throws {
        var connection = Connection()
        try connection.receive(.hello(hello()), flow("a"))
        connection.socketClosed()
        XCTAssertEqual(connection.inbox.last, .disconnected(first, reason: nil))
        XCTAssertEqual(connection.inbox.count, 3)
    }

    func testAFaultAfterTheHelloClosesTheConnectionAndIsItsReason() throws {
        var connection = Connection()
        try connection.receive(.hello(hello()))
        connection.receive(FrameEncoder.frame(payload: Data("this is not json".utf8)))
        XCTAssertEqual(connection.channelCloses, 1)
        connection.socketClosed()
        guard case .disconnected(first, let reason?)? = connection.inbox.last else { return XCTFail("\(connection.inbox)") }
        XCTAssertTrue(reason.hasPrefix("malformed payload"), reason)
    }

    func testOnlyTheFirstReasonToCloseIsKept() throws {
        var connection = Connection()
        XCTAssertEqual(connection.state.close(reason: "Connection reset by peer", isShuttingDown: false), .closeChannel)
        XCTAssertEqual(connection.state.close(reason: "later", isShuttingDown: false), .none)
        connection.socketClosed()
        XCTAssertEqual(rejection(connection.inbox), "Connection reset by peer")
    }

    // MARK: Back-pressure

    func testARefusedEventParksTheConnectionHoldsItsReadsAndGoesFirstOnResume() throws {
        var connection = Connection()
        connection.capacity = 1
        try connection.receive(.hello(hello()), flow("a"))
        XCTAssertEqual(connection.state.readRequested(), .hold)
        XCTAssertEqual(connection.state.received(try FrameEncoder().encode(flow("b"))), .wait, "parked: kept, not decoded")
        XCTAssertFalse(connection.state.takeHeldRead(), "still parked")

        connection.capacity = .max
        XCTAssertEqual(connection.drainAndResume(), [.connected(first, hello(), peer: Self.peer)])
        XCTAssertEqual(connection.inbox, [.message(first, flow("a")), .message(first, flow("b"))])
        XCTAssertTrue(connection.state.takeHeldRead(), "the read held back goes out")
        XCTAssertFalse(connection.state.takeHeldRead(), "once")
        XCTAssertEqual(connection.state.readRequested(), .read)
    }

    func testAConnectionThatClosesWhileParkedDeliversEverythingThenItsEnd() throws {
        var connection = Connection()
        connection.capacity = 2
        try connection.receive(.hello(hello()), flow("a"), flow("b"), flow("c"))
        connection.socketClosed()
        XCTAssertEqual(connection.inbox.count, 2, "parked: the end waits behind the messages")
        var events = connection.drainAndResume()
        events += connection.drainAndResume()
        events += connection.drainAndResume()
        XCTAssertEqual(events, [.connected(first, hello(), peer: Self.peer)] + ["a", "b", "c"].map { .message(first, flow($0)) }
            + [.disconnected(first, reason: nil)])
        XCTAssertFalse(connection.state.takeHeldRead(), "no read on a closed socket")
    }

    func testAnEndTheFullInboxRefusedIsOfferedOnceWhenResumed() throws {
        var connection = Connection()
        connection.capacity = 2
        try connection.receive(.hello(hello()), flow("a"))
        connection.socketClosed()
        XCTAssertEqual(connection.drainAndResume().count, 2, "the end was refused")
        XCTAssertEqual(connection.drainAndResume(), [.disconnected(first, reason: nil)])
        XCTAssertEqual(connection.drainAndResume(), [], "and never again")
    }

    func testAParkedConnectionWeCloseStillDeliversWhatItKeptThenEndsWithOurReason() throws {
        var connection = Connection()
        connection.capacity = 1
        try connection.receive(.hello(hello()), flow("a"))
        XCTAssertEqual(connection.state.close(reason: "Broken pipe", isShuttingDown: false), .closeChannel)
        connection.socketClosed()
        XCTAssertEqual(connection.inbox, [.connected(first, hello(), peer: Self.peer)], "still parked")
        connection.capacity = .max
        XCTAssertEqual(connection.drainAndResume(), [.connected(first, hello(), peer: Self.peer)])
        XCTAssertEqual(connection.inbox, [.message(first, flow("a")), .disconnected(first, reason: "Broken pipe")])
    }

    // MARK: Shutdown

    func testShutdownOfAParkedConnectionPostsItsConnectedThenItsEnd() throws {
        var connection = Connection()
        connection.capacity = 0
        try connection.receive(.hello(hello()), flow("a"))
        connection.socketClosed(isShuttingDown: true)
        XCTAssertEqual(connection.inbox, [.connected(first, hello(), peer: Self.peer), .disconnected(first, reason: "inspector shut down")])
        XCTAssertEqual(connection.state.abandon(), [], "ended once")
    }

    func testShutdownDropsUndeliveredMessagesButNotTheEndARefusedOfferHeld() throws {
        var connection = Connection()
        connection.capacity = 3
        try connection.receive(.hello(hello()), flow("a"), flow("b"))
        connection.socketClosed()
        connection.capacity = 0
        XCTAssertEqual(connection.drainAndResume().count, 3)
        XCTAssertEqual(connection.state.abandon(), [.disconnected(first, reason: nil)], "the end it had decided")
    }

    func testAConnectionOpenAtShutdownIsAbandonedOnlyOnceItsSocketCloses() throws {
        var connection = Connection()
        connection.capacity = 0
        try connection.receive(.hello(hello()))
        XCTAssertEqual(connection.state.abandon(), [])
        XCTAssertEqual(connection.state.close(reason: "anything", isShuttingDown: true), .closeChannel)
        connection.socketClosed(isShuttingDown: true)
        XCTAssertEqual(connection.inbox, [.connected(first, hello(), peer: Self.peer), .disconnected(first, reason: "inspector shut down")])
    }

    func testAConnectionDroppedBeforeItsHelloAtShutdownIsRejectedForTheShutdown() throws {
        var connection = Connection()
        connection.receive(try FrameEncoder().encode(.hello(hello())).prefix(10))
        connection.socketClosed(isShuttingDown: true)
        XCTAssertEqual(rejection(connection.inbox), "inspector shut down")
    }

    // MARK: Receipts

    func testReceiptsAreCumulativeAndWaitForTheChannelToBeWritable() throws {
        var connection = Connection()
        try connection.receive(.hello(hello()))
        XCTAssertEqual(connection.state.receipt(isWritable: true), Receipt(events: 0), "the first receipt says receipts will come")
        XCTAssertNil(connection.state.taken(3, isWritable: false))
        XCTAssertNil(connection.state.taken(2, isWritable: false))
        XCTAssertNil(connection.state.writabilityChanged(isWritable: false))
        XCTAssertEqual(connection.state.writabilityChanged(isWritable: true), Receipt(events: 5), "one receipt, the latest count")
        XCTAssertNil(connection.state.writabilityChanged(isWritable: true), "none was due")
        XCTAssertEqual(connection.state.taken(1, isWritable: true), Receipt(events: 6))
    }

    func testNoReceiptGoesBeforeTheHelloIsAccepted() {
        var connection = Connection()
        XCTAssertNil(connection.state.receipt(isWritable: true))
        XCTAssertNil(connection.state.taken(1, isWritable: true))
        XCTAssertNil(connection.state.writabilityChanged(isWritable: true))
    }

    func testNothingIsWrittenToAConnectionOnceItIsClosing() throws {
        var connection = Connection()
        try connection.receive(.hello(hello()))
        _ = connection.state.close(reason: "Broken pipe", isShuttingDown: false)
        XCTAssertNil(connection.state.taken(1, isWritable: true))
        XCTAssertFalse(connection.state.canWriteToAgent)
        connection.socketClosed()
        XCTAssertEqual(connection.inbox.last, .disconnected(first, reason: "Broken pipe"))
    }

    func testTokensAreComparedInConstantTime() {
        XCTAssertTrue(AgentConnectionState.constantTimeEquals("abc", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals("abd", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals("ab", "abc"))
        XCTAssertFalse(AgentConnectionState.constantTimeEquals(nil, "abc"))
    }
}
