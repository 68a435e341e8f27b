#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import WireProtocol

/// One agent connection: bytes in, a ``MessageDecoder`` in the middle,
/// ``InboxEvent``s out.
///
/// The connection's last event is posted once its socket has closed,
/// whatever closed it, so each connection ends with exactly one
/// `disconnected` (after its hello) or one `rejected` (before it). A
/// connection that closes without sending a byte posts nothing: that is
/// another netinspect checking whether this one is alive, or a port scan.
///
/// Back-pressure: events are offered to the bounded ``Inbox``. When it
/// refuses one, the connection parks: it keeps that event, stops decoding
/// and holds back NIO's read requests, so nothing more is read from its
/// socket. What it holds meanwhile is what was already read (NIO finishes
/// the read in progress, at most four buffers; when the peer closes, NIO
/// reads what the kernel still had for it). The next drain resumes it:
/// it offers what it holds, in order, then reads again. Its last event waits
/// behind its messages.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = NIOAny

    private let shared: ListenerContext
    private var decoder: MessageDecoder
    private var peer = "unknown peer"
    private var connection: ConnectionID?
    private var receivedBytes = false
    /// Why we closed the connection; `nil` while open or when the peer closed it.
    private var closeReason: String?
    private var isClosing = false
    private var helloDeadline: Scheduled<Void>?
    /// Set between handlerAdded and handlerRemoved.
    private var context: ChannelHandlerContext?
    /// The event the full inbox refused, with its size.
    private var refused: (event: InboxEvent, bytes: Int)?
    /// Waiting in the listener's parked list for the inbox to be drained.
    private var isParked = false
    /// NIO asked to read while parked; asked on when resumed.
    private var isReadHeld = false
    /// The socket has closed; the last event is still to be posted.
    private var isInactive = false
    /// The last event has been posted (or there was none to post).
    private var isFinished = false
    /// Inside ``deliver()``, which closing the channel can re-enter through
    /// `channelInactive`.
    private var isDelivering = false
    /// Events of this connection the UI has taken (the receipt count).
    private var takenEvents = 0
    /// The agent's hello said it accepts control: it gets the rules.
    private(set) var acceptsControl = false
    /// A receipt could not be written while the channel was not writable
    /// (an agent that does not read): the latest count goes when it is.
    private var isReceiptDue = false

    init(shared: ListenerContext) {
        self.shared = shared
        decoder = MessageDecoder(maximumFrameSize: shared.maximumFrameSize)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        shared.eventLoop.preconditionInEventLoop()
        peer = PeerAddress.of(remote: context.channel.remoteAddress, local: context.channel.localAddress)
        if let timeout = shared.helloTimeout {
            helloDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
                if self.connection == nil { self.close(reason: "no hello within \(timeout.secondsText)") }
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        let buffer = unwrapInboundIn(data)
        receivedBytes = receivedBytes || buffer.readableBytes > 0
        decoder.append(contentsOf: buffer.readableBytesView)
        if !isParked { deliver() }
    }

    func read(context: ChannelHandlerContext) {
        if isParked {
            isReadHeld = true
        } else {
            context.read()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(reason: Self.readable(error))
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if isReceiptDue { sendReceipt() }
        context.fireChannelWritabilityChanged()
    }

    /// The UI took `count` more of this connection's events.
    func taken(_ count: Int) {
        takenEvents += count
        sendReceipt()
    }

    /// Writes a control frame (a replay, new rules) to this agent.
    func sendControl(_ frame: [UInt8]) {
        guard let context, !isClosing, !isInactive else { return }
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: frame)), promise: nil)
    }

    /// Writes the receipt for everything taken so far. Receipts are
    /// cumulative, so while the agent does not read (the channel is not
    /// writable) nothing piles up here: the latest goes once it can.
    private func sendReceipt() {
        guard let context, !isClosing, !isInactive else { return }
        guard context.channel.isWritable else {
            isReceiptDue = true
            return
        }
        isReceiptDue = false
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: Receipt(events: takenEvents).frame())), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloDeadline?.cancel()
        isInactive = true
        if let connection { shared.unregister(connection) }
        if shared.isShuttingDown {
            abandon()
        } else if !isParked, !isDelivering {
            deliver()
        }
        context.fireChannelInactive()
    }

    /// Called by the listener after a drain: offers what this connection
    /// holds and, if the inbox took it all, reads again.
    func resume() {
        isParked = false
        deliver()
        if !isParked, isReadHeld, !isInactive, let context {
            isReadHeld = false
            context.read()
        }
    }

    /// Posts the last event now, whatever the bound, and drops whatever
    /// was not delivered: the listener is shutting down.
    func abandon() {
        guard isInactive, !isFinished else { return }
        isFinished = true
        let reason = "inspector shut down"
        if let connection {
            // The UI must hear of a connection before it hears of its end.
            if let refused, case .connected = refused.event { shared.inbox.post(refused.event) }
            shared.inbox.post(.disconnected(connection, reason: reason))
        } else if receivedBytes || closeReason != nil {
            shared.inbox.post(.rejected(peer: peer, reason: closeReason ?? reason))
        }
    }

    /// Offers, in order, the refused event, every message decoded from what
    /// has been read, and once the socket has closed the last event; parks
    /// at the first refusal.
    private func deliver() {
        guard !isFinished else { return }
        isDelivering = true
        defer { isDelivering = false }
        if let refused {
            guard offer(refused.event, bytes: refused.bytes) else { return }
            self.refused = nil
        }
        do {
            while !isClosing {
                let before = decoder.bufferedByteCount
                guard let message = try decoder.next() else { break }
                if let event = receive(message), !offer(event, bytes: before - decoder.bufferedByteCount) { return }
            }
        } catch {
            close(reason: error.description)
        }
        // abandon() may have ended it meanwhile.
        guard isInactive, !isFinished else { return }
        let event = lastEvent()
        if let event, !offer(event, bytes: 0) { return }
        isFinished = true
    }

    private func offer(_ event: InboxEvent, bytes: Int) -> Bool {
        if shared.inbox.offer(event, bytes: bytes) { return true }
        refused = (event, bytes)
        isParked = true
        shared.park(self)
        return false
    }

    /// What a message means for the inbox, if anything.
    private func receive(_ message: Message) -> InboxEvent? {
        if let connection { return .message(connection, message) }
        // The decoder lets nothing but a hello through first.
        guard case .hello(let hello) = message else { return nil }
        if let token = shared.token, !Self.constantTimeEquals(hello.token, token) {
            close(reason: "wrong token")
            return nil
        }
        helloDeadline?.cancel()
        let id = shared.nextConnectionID()
        connection = id
        shared.register(self, as: id)
        // Rules go before the first receipt: an agent that waits for that
        // receipt at start-up then has them for the app's first request.
        acceptsControl = hello.acceptsControl
        // Version 2 (raw bodies) only when the agent offers it: an older
        // agent never gets a message it would have to skip.
        if let highest = hello.highestProtocolVersion, highest >= 2, let context {
            let version = min(highest, Wire.highestProtocolVersion)
            context.write(NIOAny(ByteBuffer(bytes: ViewerMessage.useProtocolVersion(version).frame())), promise: nil)
        }
        if hello.acceptsControl, let rulesFrame = shared.currentRulesFrame, let context {
            context.write(NIOAny(ByteBuffer(bytes: rulesFrame)), promise: nil)
        }
        // Tells the agent that receipts will come (see ``Receipt``).
        sendReceipt()
        return .connected(id, hello, peer: peer)
    }

    private func lastEvent() -> InboxEvent? {
        let reason = closeReason ?? endOfStreamReason()
        if let connection { return .disconnected(connection, reason: reason) }
        if receivedBytes || closeReason != nil {
            return .rejected(peer: peer, reason: reason ?? "closed before sending a hello")
        }
        return nil
    }

    /// Closes the connection for `reason`; once it has already closed, only
    /// records why (a fault found in bytes decoded after the peer left).
    private func close(reason: String) {
        guard !isClosing else { return }
        isClosing = true
        closeReason = shared.isShuttingDown ? "inspector shut down" : reason
        if !isInactive { context?.close(promise: nil) }
    }

    private func endOfStreamReason() -> String? {
        if shared.isShuttingDown { return "inspector shut down" }
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

    /// An I/O error as the operating system words it, e.g. "Connection reset by peer".
    static func readable(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// "10s", "0.5s".
    var secondsText: String {
        let (seconds, attoseconds) = components
        guard attoseconds != 0 else { return "\(seconds)s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18)s"
    }
}
