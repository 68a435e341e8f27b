#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import WireProtocol

/// One agent connection's I/O: bytes in, ``InboxEvent``s out, and the
/// frames the viewer sends back (receipts, rules, replays). What each event
/// on the socket means (the hello, back-pressure, closing, the last event)
/// is decided by its ``AgentConnectionState``; this handler tells it what
/// happened and carries out what it answers.
///
/// Back-pressure: events are offered to the bounded ``Inbox``. When it
/// refuses one, the connection parks: it stops decoding and holds back NIO's
/// read requests, so nothing more is read from its socket. What it holds
/// meanwhile is what was already read (NIO finishes the read in progress, at
/// most four buffers; when the peer closes, NIO reads what the kernel still
/// had for it). The next drain resumes it through the listener.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = NIOAny

    private let shared: ListenerContext
    private var state: AgentConnectionState
    private var helloDeadline: Scheduled<Void>?
    /// Set between handlerAdded and handlerRemoved.
    private var context: ChannelHandlerContext?

    init(shared: ListenerContext) {
        self.shared = shared
        state = AgentConnectionState(token: shared.token, maximumFrameSize: shared.maximumFrameSize)
    }

    /// The agent's hello said it accepts control: it gets the rules.
    var acceptsControl: Bool { state.acceptsControl }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        shared.eventLoop.preconditionInEventLoop()
        state.opened(peer: PeerAddress.of(remote: context.channel.remoteAddress, local: context.channel.localAddress))
        if let timeout = shared.helloTimeout {
            helloDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
                self.carryOut(self.state.helloTimedOut(after: timeout, isShuttingDown: self.shared.isShuttingDown))
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state.received(unwrapInboundIn(data).readableBytesView) == .deliver { deliver() }
    }

    func read(context: ChannelHandlerContext) {
        if state.readRequested() == .read { context.read() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        carryOut(state.close(reason: Self.readable(error), isShuttingDown: shared.isShuttingDown))
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        write(state.writabilityChanged(isWritable: context.channel.isWritable))
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloDeadline?.cancel()
        if let connection = state.connection { shared.unregister(connection) }
        switch state.socketClosed(isShuttingDown: shared.isShuttingDown) {
        case .deliver: deliver()
        case .wait: break
        case .post(let events): for event in events { shared.inbox.post(event) }
        }
        context.fireChannelInactive()
    }

    /// The UI took `count` more of this connection's events.
    func taken(_ count: Int) {
        write(state.taken(count, isWritable: context?.channel.isWritable ?? false))
    }

    /// Writes a control frame (a replay, new rules) to this agent.
    func sendControl(_ frame: [UInt8]) {
        guard let context, state.canWriteToAgent else { return }
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: frame)), promise: nil)
    }

    /// Called by the listener after a drain: offers what this connection
    /// holds and, if the inbox took it all, reads again.
    func resume() {
        state.resume()
        deliver()
        if let context, state.takeHeldRead() { context.read() }
    }

    /// Posts the last event now, whatever the bound, and drops whatever
    /// was not delivered: the listener is shutting down.
    func abandon() {
        for event in state.abandon() { shared.inbox.post(event) }
    }

    /// Carries out the state's steps until it is idle or parked. Closing
    /// the channel may re-enter it (through `channelInactive`); the state
    /// keeps everything delivery needs, so the inner call simply goes on.
    private func deliver() {
        while true {
            switch state.nextStep(isShuttingDown: shared.isShuttingDown) {
            case .offer(let event, let bytes):
                guard shared.inbox.offer(event, bytes: bytes) else {
                    state.refused(event, bytes: bytes)
                    shared.park(self)
                    return
                }
            case .accept(let hello, let bytes):
                helloDeadline?.cancel()
                let id = shared.nextConnectionID()
                shared.register(self, as: id)
                shakeHands(state.accept(hello, bytes: bytes, as: id))
            case .close:
                context?.close(promise: nil)
            case .idle:
                return
            }
        }
    }

    private func shakeHands(_ handshake: AgentConnectionState.Handshake) {
        guard let context else { return }
        if let version = handshake.protocolVersion {
            context.write(NIOAny(ByteBuffer(bytes: ViewerMessage.useProtocolVersion(version).frame())), promise: nil)
        }
        if handshake.sendsRules, let rulesFrame = shared.currentRulesFrame {
            context.write(NIOAny(ByteBuffer(bytes: rulesFrame)), promise: nil)
        }
        // Before the first receipt, which `CaptureAgent.start()` waits for:
        // the app's first request is already answered from the recording.
        if handshake.sendsRules {
            for frame in shared.currentServerReplayFrames { context.write(NIOAny(ByteBuffer(bytes: frame)), promise: nil) }
        }
        // Flushed whether or not the receipt can go now: a book larger than
        // the channel's high-water mark (64 KiB) leaves it unwritable, the
        // receipt then waits for writability, which only this flush brings
        // (without it, nothing of the handshake was ever sent).
        context.flush()
        // Tells the agent that receipts will come (see ``Receipt``).
        write(state.receipt(isWritable: context.channel.isWritable))
    }

    private func write(_ receipt: Receipt?) {
        guard let receipt, let context else { return }
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: receipt.frame())), promise: nil)
    }

    private func carryOut(_ action: AgentConnectionState.CloseAction) {
        if action == .closeChannel { context?.close(promise: nil) }
    }

    /// An I/O error as the operating system words it, e.g. "Connection reset by peer".
    static func readable(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}
