import WireProtocol

/// The lifecycle of one agent connection, as a value that does no I/O: the
/// bytes read, the hello and its token, back-pressure from the ``Inbox``,
/// closing, and the connection's last event. ``ConnectionHandler`` tells it
/// what happened on the socket and carries out the action each call returns
/// (the shape of swift-nio's `…StateMachine` beside its handler, and of the
/// agent's `ExchangeControl`):
///
/// ```swift
/// var state = AgentConnectionState(token: nil, maximumFrameSize: Wire.defaultMaximumFrameSize)
/// state.opened(peer: "unix:/tmp/ni.sock")
/// if state.received(bytes) == .deliver {
///     loop: while true {
///         switch state.nextStep(isShuttingDown: false) {
///         case .offer(let event, let bytes): if !inbox.offer(event, bytes: bytes) { state.refused(event, bytes: bytes); break loop }
///         case .accept(let hello, let bytes): _ = state.accept(hello, bytes: bytes, as: nextID())  // then write the handshake
///         case .close: channel.close()
///         case .idle: break loop
///         }
///     }
/// }
/// ```
///
/// Each connection ends with exactly one last event, posted once its
/// socket has closed, whatever closed it: `disconnected` after its hello,
/// `rejected` before it, or nothing for a connection that closed without
/// sending a byte (another netinspect checking whether this one is alive,
/// or a port scan). The last event is decided in
/// ``lastEvent(of:closedFor:isShuttingDown:)`` alone, whether the inbox takes
/// it in turn or shutdown posts it.
///
/// Its whole life is one ``State``: `silent`, `awaitingHello` (bytes came),
/// `serving` (the hello accepted), `closing` (we close it), `closed` (the
/// socket has), `finished` (the last event decided); each case carries what
/// it needs (the agent and its receipts, the reason, what delivery keeps
/// back), so no flag can disagree with another.
///
/// Back-pressure: an event the inbox refuses is kept, and the connection is
/// *parked*: it decodes nothing more and holds back the reads NIO asks for,
/// until ``resume()``; then it offers what it kept first, in order, and the
/// read held back goes out. Its last event waits behind its messages.
struct AgentConnectionState {
    /// What the next call to ``nextStep(isShuttingDown:)`` asks of the handler.
    enum Step {
        /// Offer this to the inbox; if it refuses, hand it back with ``refused(_:bytes:)``.
        case offer(InboxEvent, bytes: Int)
        /// A hello with the right token came: mint the connection's
        /// identifier, then ``accept(_:bytes:as:)`` and write the handshake.
        case accept(Hello, bytes: Int)
        /// Close the channel (the reason is kept for the last event).
        case close
        /// Nothing to do until more bytes, a resume or the socket's close.
        case idle
    }

    /// What to write to an agent whose hello was accepted, before its first receipt.
    struct Handshake: Equatable {
        /// The protocol version to ask the agent for, when it offers more than 1.
        var protocolVersion: Int?
        /// Whether the rules in force go to it (it accepts control).
        var sendsRules: Bool
    }

    /// What to do with bytes just read.
    enum ReceiveAction: Equatable {
        /// Decode and offer them now.
        case deliver
        /// Keep them: the connection is parked, or closing.
        case wait
    }

    /// What to do when NIO asks to read.
    enum ReadAction: Equatable {
        case read
        /// Parked: the read goes out when the connection resumes.
        case hold
    }

    /// What to do once the socket has closed.
    enum ClosedAction: Equatable {
        /// Offer what is left, then the last event.
        case deliver
        /// Parked: the next resume offers it.
        case wait
        /// The listener is shutting down: post these at once, whatever the bound.
        case post([InboxEvent])
    }

    /// Whether the handler must close the channel.
    enum CloseAction: Equatable {
        case closeChannel
        case none
    }

    private let token: String?
    private var decoder: MessageDecoder
    private(set) var peer = "unknown peer"
    private var state = State.silent

    init(token: String?, maximumFrameSize: Int) {
        self.token = token
        decoder = MessageDecoder(maximumFrameSize: maximumFrameSize)
    }

    /// The connection's identifier once its hello was accepted, until it ends.
    var connection: ConnectionID? {
        switch state {
        case .serving(let agent, _): agent.id
        case .closing(let connection, _, _): connection
        case .closed(.agent(let id), _, _): id
        case .silent, .awaitingHello, .closed, .finished: nil
        }
    }

    /// The agent's hello said it accepts control, and it is being served: it gets the rules.
    var acceptsControl: Bool {
        if case .serving(let agent, _) = state { return agent.acceptsControl }
        return false
    }

    /// Whether frames (receipts, rules, replays) may still be written to the agent.
    var canWriteToAgent: Bool {
        switch state {
        case .silent, .awaitingHello, .serving: true
        case .closing, .closed, .finished: false
        }
    }

    private var backlog: Backlog {
        get {
            switch state {
            case .silent, .awaitingHello: .none
            case .serving(_, let backlog), .closing(_, _, let backlog), .closed(_, _, let backlog), .finished(let backlog): backlog
            }
        }
        set {
            switch state {
            case .silent, .awaitingHello: precondition(newValue.isEmpty, "nothing is offered before the hello is accepted")
            case .serving(let agent, _): state = .serving(agent, newValue)
            case .closing(let connection, let reason, _): state = .closing(connection: connection, reason: reason, newValue)
            case .closed(let party, let reason, _): state = .closed(party, reason: reason, newValue)
            case .finished: state = .finished(newValue)
            }
        }
    }

    // MARK: - Socket events

    /// The channel is active, with the agent at `peer`.
    mutating func opened(peer: String) {
        self.peer = peer
    }

    /// Bytes were read from the socket.
    mutating func received<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> ReceiveAction {
        switch state {
        case .closing, .closed(_, reason: .some, _), .finished:
            return .wait
        case .silent:
            if !bytes.isEmpty { state = .awaitingHello }
        case .closed(.silent, nil, let backlog):
            if !bytes.isEmpty { state = .closed(.stranger, reason: nil, backlog) }
        case .awaitingHello, .serving, .closed:
            break
        }
        decoder.append(contentsOf: bytes)
        return backlog.isParked ? .wait : .deliver
    }

    mutating func readRequested() -> ReadAction {
        guard case .parked(let event, let bytes, _) = backlog else { return .read }
        backlog = .parked(event, bytes: bytes, readHeld: true)
        return .hold
    }

    /// The socket has closed, whoever closed it.
    mutating func socketClosed(isShuttingDown: Bool) -> ClosedAction {
        switch state {
        case .silent: state = .closed(.silent, reason: nil, .none)
        case .awaitingHello: state = .closed(.stranger, reason: nil, .none)
        case .serving(let agent, let backlog): state = .closed(.agent(agent.id), reason: nil, backlog)
        case .closing(let connection, let reason, let backlog):
            state = .closed(connection.map(Party.agent) ?? .stranger, reason: reason, backlog)
        case .closed, .finished: break
        }
        if isShuttingDown { return .post(abandon()) }
        return backlog.isParked ? .wait : .deliver
    }

    /// We close the connection for `reason` (an I/O error, a fault in its
    /// bytes, a wrong token, no hello in time). Once it has closed, or is
    /// closing already, only the first reason is kept.
    mutating func close(reason: String, isShuttingDown: Bool) -> CloseAction {
        let reason = isShuttingDown ? Self.shutdownReason : reason
        switch state {
        case .silent, .awaitingHello:
            state = .closing(connection: nil, reason: reason, .none)
            return .closeChannel
        case .serving(let agent, let backlog):
            state = .closing(connection: agent.id, reason: reason, backlog)
            return .closeChannel
        case .closed(let party, nil, let backlog):
            state = .closed(party, reason: reason, backlog)
            return .none
        case .closing, .closed, .finished:
            return .none
        }
    }

    /// The hello deadline passed.
    mutating func helloTimedOut(after timeout: Duration, isShuttingDown: Bool) -> CloseAction {
        guard connection == nil else { return .none }
        return close(reason: "no hello within \(timeout.secondsText)", isShuttingDown: isShuttingDown)
    }

    // MARK: - Delivery

    /// What to do next: offer the event kept back, the next message decoded,
    /// and once the socket has closed, the last event; `idle` when parked or
    /// when there is nothing more for now.
    ///
    /// All that delivery needs is kept here, so a handler that re-enters its
    /// delivery (closing the channel can close the socket at once) carries
    /// on where it was.
    mutating func nextStep(isShuttingDown: Bool) -> Step {
        switch backlog {
        case .parked:
            return .idle
        case .due(let event, let bytes, let readHeld):
            backlog = readHeld ? .readHeld : .none
            return .offer(event, bytes: bytes)
        case .none, .readHeld:
            break
        }
        while isDecoding {
            let before = decoder.bufferedByteCount
            let message: Message
            do {
                guard let next = try decoder.next() else { break }
                message = next
            } catch {
                if close(reason: error.description, isShuttingDown: isShuttingDown) == .closeChannel { return .close }
                break
            }
            let bytes = before - decoder.bufferedByteCount
            if let connection { return .offer(.message(connection, message), bytes: bytes) }
            // The decoder lets nothing but a hello through first.
            guard case .hello(let hello) = message else { continue }
            if let token, !Self.constantTimeEquals(hello.token, token) {
                if close(reason: "wrong token", isShuttingDown: isShuttingDown) == .closeChannel { return .close }
                break
            }
            return .accept(hello, bytes: bytes)
        }
        guard case .closed(let party, let reason, let backlog) = state else { return .idle }
        state = .finished(backlog)
        guard let event = lastEvent(of: party, closedFor: reason, isShuttingDown: isShuttingDown) else { return .idle }
        return .offer(event, bytes: 0)
    }

    /// Whether buffered bytes are still decoded: until we close the
    /// connection, also after its socket has closed (what the peer sent last).
    private var isDecoding: Bool {
        switch state {
        case .silent, .awaitingHello, .serving, .closed(_, reason: nil, _): true
        case .closing, .closed, .finished: false
        }
    }

    /// The inbox refused `event`: it is kept, and the connection parks.
    mutating func refused(_ event: InboxEvent, bytes: Int) {
        backlog = .parked(event, bytes: bytes, readHeld: backlog.isReadHeld)
    }

    /// The inbox was drained: what was refused is offered first.
    mutating func resume() {
        if case .parked(let event, let bytes, let readHeld) = backlog { backlog = .due(event, bytes: bytes, readHeld: readHeld) }
    }

    /// Whether a read NIO asked for while parked goes out now (once
    /// resumed, and only while the socket is open).
    mutating func takeHeldRead() -> Bool {
        switch state {
        case .silent, .awaitingHello, .serving, .closing: break
        case .closed, .finished: return false
        }
        switch backlog {
        case .readHeld: backlog = .none
        case .due(let event, let bytes, true): backlog = .due(event, bytes: bytes, readHeld: false)
        case .none, .parked, .due: return false
        }
        return true
    }

    /// The hello was accepted as connection `id`: `connected` is offered
    /// next, and the handshake says what to write first. Rules go before
    /// the first receipt: an agent that waits for that receipt at start-up
    /// then has them for the app's first request.
    mutating func accept(_ hello: Hello, bytes: Int, as id: ConnectionID) -> Handshake {
        let connected = Backlog.due(.connected(id, hello, peer: peer), bytes: bytes, readHeld: backlog.isReadHeld)
        switch state {
        case .silent, .awaitingHello:
            state = .serving(Agent(id: id, acceptsControl: hello.acceptsControl), connected)
        case .closed(_, let reason, _):
            // The hello was still buffered when the socket closed.
            state = .closed(.agent(id), reason: reason, connected)
        case .serving, .closing, .finished:
            preconditionFailure("a hello is accepted once, while the bytes before it are decoded")
        }
        // Version 2 (raw bodies) only when the agent offers it: an older
        // agent never gets a message it would have to skip.
        var version: Int?
        if let highest = hello.highestProtocolVersion, highest >= 2 { version = min(highest, Wire.highestProtocolVersion) }
        return Handshake(protocolVersion: version, sendsRules: hello.acceptsControl)
    }

    /// Ends a closed connection now, as the listener shuts down: what was
    /// not delivered is dropped, but the UI still hears of the connection
    /// before it hears of its end. Returns what to post (nothing once it
    /// has ended, or while its socket is open).
    mutating func abandon() -> [InboxEvent] {
        switch state {
        case .silent, .awaitingHello, .serving, .closing:
            return []
        case .finished(let backlog):
            // What was kept, if anything, is the last event.
            state = .finished(.none)
            return backlog.event.map { [$0] } ?? []
        case .closed(let party, let reason, let backlog):
            state = .finished(.none)
            var events: [InboxEvent] = []
            if case .connected? = backlog.event, let kept = backlog.event { events.append(kept) }
            if let last = lastEvent(of: party, closedFor: reason, isShuttingDown: true) { events.append(last) }
            return events
        }
    }

    // MARK: - Receipts

    /// The UI took `count` more of this connection's events: the receipt to
    /// write, if it can be written now.
    mutating func taken(_ count: Int, isWritable channelIsWritable: Bool) -> Receipt? {
        guard case .serving(var agent, let backlog) = state else { return nil }
        agent.taken += count
        state = .serving(agent, backlog)
        return receipt(isWritable: channelIsWritable)
    }

    /// The receipt for everything taken so far, to write now, if the channel
    /// can take it. Receipts are cumulative, so while the agent does not read
    /// nothing piles up: the latest goes once it can. Only a served agent
    /// gets receipts: none before its hello, none once it is closing.
    mutating func receipt(isWritable channelIsWritable: Bool) -> Receipt? {
        guard channelIsWritable, case .serving(var agent, let backlog) = state else { return nil }
        agent.written = agent.taken
        state = .serving(agent, backlog)
        return Receipt(events: agent.taken)
    }

    /// The channel's writability changed: a receipt held back goes now.
    mutating func writabilityChanged(isWritable channelIsWritable: Bool) -> Receipt? {
        guard case .serving(let agent, _) = state, agent.written != agent.taken else { return nil }
        return receipt(isWritable: channelIsWritable)
    }

    // MARK: - The last event

    private static let shutdownReason = "inspector shut down"

    /// How the connection ended, for the UI: why we closed it, else how its
    /// stream ended (cleanly: nil; inside a frame: the fault; at shutdown:
    /// the shutdown). Nil for a connection that closed without a byte.
    private func lastEvent(of party: Party, closedFor closeReason: String?, isShuttingDown: Bool) -> InboxEvent? {
        let reason = closeReason ?? endOfStreamReason(isShuttingDown: isShuttingDown)
        switch party {
        case .agent(let connection): return .disconnected(connection, reason: reason)
        case .silent where closeReason == nil: return nil
        case .silent, .stranger: return .rejected(peer: peer, reason: reason ?? "closed before sending a hello")
        }
    }

    private func endOfStreamReason(isShuttingDown: Bool) -> String? {
        if isShuttingDown { return Self.shutdownReason }
        do {
            try decoder.finish()
            return nil
        } catch {
            return error.description
        }
    }

    /// Compares every byte whatever the first difference, so the time taken
    /// does not tell an attacker how much of a guess was right.
    static func constantTimeEquals(_ offered: String?, _ expected: String) -> Bool {
        let offered = Array((offered ?? "").utf8), expected = Array(expected.utf8)
        var difference: UInt8 = offered.count == expected.count ? 0 : 1
        for index in 0 ..< max(offered.count, expected.count) {
            let left = index < offered.count ? offered[index] : 0
            let right = index < expected.count ? expected[index] : 0
            difference |= left ^ right
        }
        return difference == 0
    }
}
