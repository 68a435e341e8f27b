import NIOCore

/// Terminates TLS for one OTLP connection, first in its pipeline: ciphertext
/// from the socket goes through a ``TLSConnection`` and comes out as the
/// plaintext the HTTP handlers read; their answers go back encrypted.
///
/// A handshake that fails (a client that does not trust the certificate,
/// plain HTTP sent to the TLS port, a client below TLS 1.2) closes the
/// connection after OpenSSL's alert, and nothing else: the handlers behind
/// it never saw a byte. Closing sends `close_notify` first; the client's
/// `close_notify` is answered with ours, then the connection closes.
///
/// ```swift
/// try pipeline.addHandler(TLSServerHandler(context: tlsContext))
/// try pipeline.configureHTTPServerPipeline()
/// ```
final class TLSServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the connection is. Writes that come before the handshake ends
    /// wait with it; after a close starts, there is nothing left to write to.
    private enum State {
        case handshaking(pending: [(ByteBuffer, EventLoopPromise<Void>?)])
        case open
        case closed
    }

    private let context: TLSContext
    private var connection: TLSConnection?
    private var state = State.handshaking(pending: [])
    /// Whether plaintext went up since the last `channelReadComplete`.
    private var deliveredPlaintext = false

    init(context: TLSContext) {
        self.context = context
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection = TLSConnection(context: self.context)
        if connection == nil { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failPendingWrites()
        connection = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection else { return }
        connection.feed(unwrapInboundIn(data))
        if case .handshaking(let pending) = state {
            switch connection.handshake() {
            case .needsMoreInput:
                sendCiphertext(context: context)
                return
            case .failed:
                sendCiphertext(context: context)
                closeNow(context: context)
                return
            case .finished:
                state = .open
                for (bytes, promise) in pending { write(context: context, plaintext: bytes, promise: promise) }
                if !pending.isEmpty { context.flush() }
            }
        }
        guard case .open = state else { return }
        var chunks: [ByteBuffer] = []
        let end = connection.readPlaintext(allocator: context.channel.allocator, into: &chunks)
        for chunk in chunks { context.fireChannelRead(wrapInboundOut(chunk)) }
        deliveredPlaintext = deliveredPlaintext || !chunks.isEmpty
        switch end {
        case .needsMoreInput:
            sendCiphertext(context: context)
        case .closedByPeer:
            connection.shutdown()
            sendCiphertext(context: context)
            closeNow(context: context)
        case .failed:
            sendCiphertext(context: context)
            closeNow(context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard deliveredPlaintext else { return }
        deliveredPlaintext = false
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        failPendingWrites()
        state = .closed
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data)
        switch state {
        case .handshaking(var pending):
            pending.append((bytes, promise))
            state = .handshaking(pending: pending)
        case .open:
            write(context: context, plaintext: bytes, promise: promise)
        case .closed:
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if case .open = state, mode != .input, let connection {
            connection.shutdown()
            if let ciphertext = connection.takeCiphertext(allocator: context.channel.allocator) {
                context.writeAndFlush(wrapOutboundOut(ciphertext), promise: nil)
            }
        }
        if mode == .all {
            failPendingWrites()
            state = .closed
        }
        context.close(mode: mode, promise: promise)
    }

    /// Encrypts and writes; the ciphertext's write completes the promise.
    private func write(context: ChannelHandlerContext, plaintext: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let connection, connection.write(plaintext) else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            closeNow(context: context)
            return
        }
        if let ciphertext = connection.takeCiphertext(allocator: context.channel.allocator) {
            context.write(wrapOutboundOut(ciphertext), promise: promise)
        } else {
            promise?.succeed()
        }
    }

    /// What OpenSSL wrote during a read or a handshake step: handshake
    /// messages, alerts, tickets, `close_notify`.
    private func sendCiphertext(context: ChannelHandlerContext) {
        guard let ciphertext = connection?.takeCiphertext(allocator: context.channel.allocator) else { return }
        context.writeAndFlush(wrapOutboundOut(ciphertext), promise: nil)
    }

    private func closeNow(context: ChannelHandlerContext) {
        failPendingWrites()
        state = .closed
        context.close(promise: nil)
    }

    /// Fails the writes waiting for the handshake; the connection is over.
    private func failPendingWrites() {
        guard case .handshaking(let pending) = state else { return }
        state = .closed
        for (_, promise) in pending { promise?.fail(ChannelError.ioOnClosedChannel) }
    }
}
