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
/// or a port scan). The last event is decided in ``lastEvent(isShuttingDown:)``
/// alone, whether the inbox takes it in turn or shutdown posts it.
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

    private enum Socket {
        case open
        /// Closed; the last event is still to be decided.
        case closed
        /// The last event has been decided (or there was none).
        case finished
    }

    /// An event the inbox has not taken yet.
    private enum Held {
        case none
        /// Refused: the connection is parked until ``resume()``.
        case parked(InboxEvent, bytes: Int)
        /// To offer before anything else: resumed, or the accepted hello's `connected`.
        case due(InboxEvent, bytes: Int)
    }

    private let token: String?
    private var decoder: MessageDecoder
    private(set) var peer = "unknown peer"
    /// Set once the hello was accepted.
    private(set) var connection: ConnectionID?
    /// The agent's hello said it accepts control: it gets the rules.
    private(set) var acceptsControl = false
    private var socket = Socket.open
    /// Why we closed the connection; nil while we have not (open, or the peer closed it).
    private var closeReason: String?
    private var receivedBytes = false
    private var held = Held.none
    /// NIO asked to read while parked.
    private var isReadHeld = false
    /// Events of this connection the UI has taken (the receipt count).
    private var takenEvents = 0
    /// A receipt could not be written while the channel was not writable
    /// (an agent that does not read): the latest count goes when it is.
    private var isReceiptDue = false

    init(token: String?, maximumFrameSize: Int) {
        self.token = token
        decoder = MessageDecoder(maximumFrameSize: maximumFrameSize)
    }

    /// Whether frames (receipts, rules, replays) may still be written to the agent.
    var canWriteToAgent: Bool { socket == .open && closeReason == nil }

    private var isParked: Bool {
        if case .parked = held { return true }
        return false
    }

    // MARK: - Socket events

    /// The channel is active, with the agent at `peer`.
    mutating func opened(peer: String) {
        self.peer = peer
    }

    /// Bytes were read from the socket.
    mutating func received<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> ReceiveAction {
        guard closeReason == nil else { return .wait }
        receivedBytes = receivedBytes || !bytes.isEmpty
        decoder.append(contentsOf: bytes)
        return isParked ? .wait : .deliver
    }

    mutating func readRequested() -> ReadAction {
        guard isParked else { return .read }
        isReadHeld = true
        return .hold
    }

    /// The socket has closed, whoever closed it.
    mutating func socketClosed(isShuttingDown: Bool) -> ClosedAction {
        if socket == .open { socket = .closed }
        if isShuttingDown { return .post(abandon()) }
        return isParked ? .wait : .deliver
    }

    /// We close the connection for `reason` (an I/O error, a fault in its
    /// bytes, a wrong token, no hello in time). Once it has closed, or is
    /// closing already, only the first reason is kept.
    mutating func close(reason: String, isShuttingDown: Bool) -> CloseAction {
        guard closeReason == nil else { return .none }
        closeReason = isShuttingDown ? Self.shutdownReason : reason
        return socket == .open ? .closeChannel : .none
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
        switch held {
        case .parked:
            return .idle
        case .due(let event, let bytes):
            held = .none
            return .offer(event, bytes: bytes)
        case .none:
            break
        }
        guard socket != .finished else { return .idle }
        while closeReason == nil {
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
        guard socket == .closed else { return .idle }
        socket = .finished
        guard let event = lastEvent(isShuttingDown: isShuttingDown) else { return .idle }
        return .offer(event, bytes: 0)
    }

    /// The inbox refused `event`: it is kept, and the connection parks.
    mutating func refused(_ event: InboxEvent, bytes: Int) {
        held = .parked(event, bytes: bytes)
    }

    /// The inbox was drained: what was refused is offered first.
    mutating func resume() {
        if case .parked(let event, let bytes) = held { held = .due(event, bytes: bytes) }
    }

    /// Whether a read NIO asked for while parked goes out now (once
    /// resumed, and only while the socket is open).
    mutating func takeHeldRead() -> Bool {
        guard isReadHeld, !isParked, socket == .open else { return false }
        isReadHeld = false
        return true
    }

    /// The hello was accepted as connection `id`: `connected` is offered
    /// next, and the handshake says what to write first. Rules go before
    /// the first receipt: an agent that waits for that receipt at start-up
    /// then has them for the app's first request.
    mutating func accept(_ hello: Hello, bytes: Int, as id: ConnectionID) -> Handshake {
        connection = id
        acceptsControl = hello.acceptsControl
        held = .due(.connected(id, hello, peer: peer), bytes: bytes)
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
        guard socket != .open else { return [] }
        var events: [InboxEvent] = []
        var kept: InboxEvent?
        switch held {
        case .parked(let event, _), .due(let event, _): kept = event
        case .none: break
        }
        held = .none
        if socket == .finished {
            // What was kept, if anything, is the last event.
            if let kept { events.append(kept) }
            return events
        }
        socket = .finished
        if case .connected? = kept, let kept { events.append(kept) }
        if let last = lastEvent(isShuttingDown: true) { events.append(last) }
        return events
    }

    // MARK: - Receipts

    /// The UI took `count` more of this connection's events: the receipt to
    /// write, if it can be written now.
    mutating func taken(_ count: Int, isWritable channelIsWritable: Bool) -> Receipt? {
        takenEvents += count
        return receipt(isWritable: channelIsWritable)
    }

    /// The receipt for everything taken so far, to write now, if the channel
    /// can take it. Receipts are cumulative, so while the agent does not read
    /// nothing piles up: the latest goes once it can.
    mutating func receipt(isWritable channelIsWritable: Bool) -> Receipt? {
        guard canWriteToAgent else { return nil }
        guard channelIsWritable else {
            isReceiptDue = true
            return nil
        }
        isReceiptDue = false
        return Receipt(events: takenEvents)
    }

    /// The channel's writability changed: a receipt held back goes now.
    mutating func writabilityChanged(isWritable channelIsWritable: Bool) -> Receipt? {
        isReceiptDue ? receipt(isWritable: channelIsWritable) : nil
    }

    // MARK: - The last event

    private static let shutdownReason = "inspector shut down"

    /// How the connection ended, for the UI: why we closed it, else how its
    /// stream ended (cleanly: nil; inside a frame: the fault; at shutdown:
    /// the shutdown). Nil for a connection that closed without a byte.
    private func lastEvent(isShuttingDown: Bool) -> InboxEvent? {
        let reason = closeReason ?? endOfStreamReason(isShuttingDown: isShuttingDown)
        if let connection { return .disconnected(connection, reason: reason) }
        guard receivedBytes || closeReason != nil else { return nil }
        return .rejected(peer: peer, reason: reason ?? "closed before sending a hello")
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
