// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import CaptureAgent
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One app connection to the ``ControlTunnel``: its `CONNECT` request, then
/// its bytes to and from a connection of the tunnel's own to the server.
/// Everything here runs on the app connection's event loop; the server
/// connection is made on the same loop, so the two handlers call each other
/// directly.
final class TunnelFrontHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// Reading the `CONNECT` request's head.
        case readingConnect(ByteBuffer)
        /// A connection to the server is being made; bytes the app sends meanwhile wait.
        case connecting(pending: ByteBuffer)
        /// Bytes go both ways.
        case open(Channel)
        /// No connection to the server: the app's next bytes make one.
        case detached
        case closed
    }

    /// The longest `CONNECT` head taken (AsyncHTTPClient's is under 200 bytes).
    static let headLimit = 8192

    private let agent: CaptureAgent
    private var state = State.readingConnect(ByteBuffer())
    private var target: (host: String, port: Int)?
    private var context: ChannelHandlerContext?
    /// The server connection is closing because the tunnel closed it: the app's stays.
    private var detaching: Channel?
    /// The app asked to read while the server connection could take no more.
    private var readPending = false
    /// The last write to the app: its connection closes after it.
    private var lastWrite: EventLoopFuture<Void>?
    /// The server reset its connection: the app's is reset too, so its
    /// client reports the reset it would report without the tunnel.
    private var upstreamWasReset = false

    init(agent: CaptureAgent) {
        self.agent = agent
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        switch state {
        case .readingConnect(var head):
            head.writeBuffer(&bytes)
            readConnect(head, context: context)
        case .connecting(var pending):
            pending.writeBuffer(&bytes)
            state = .connecting(pending: pending)
        case .open(let upstream):
            upstream.write(bytes, promise: nil)
        case .detached:
            connect(sending: bytes, context: context)
        case .closed:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .open(let upstream) = state { upstream.flush() }
        switch state {
        case .readingConnect, .connecting, .detached: context.read()
        case .open(let upstream) where upstream.isWritable: context.read()
        case .open: readPending = true
        case .closed: break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .open(let upstream) = state { upstream.close(promise: nil) }
        state = .closed
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    // MARK: - The CONNECT request

    private func readConnect(_ head: ByteBuffer, context: ChannelHandlerContext) {
        guard let end = head.readableBytesView.firstRange(of: [13, 10, 13, 10]) else {
            if head.readableBytes > Self.headLimit { refuse(context: context) } else { state = .readingConnect(head) }
            return
        }
        // "CONNECT host:port HTTP/1.1"; AsyncHTTPClient writes an IPv6 host without brackets.
        let lineEnd = head.readableBytesView.firstIndex(of: 13) ?? end.lowerBound
        let line = String(decoding: head.readableBytesView[..<lineEnd], as: UTF8.self)
        let words = line.split(separator: " ")
        guard words.count == 3, words[0] == "CONNECT", let colon = words[1].lastIndex(of: ":"),
              let port = Int(words[1][words[1].index(after: colon)...]) else { return refuse(context: context) }
        var host = String(words[1][..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        target = (host, port)
        var rest = head
        rest.moveReaderIndex(to: end.upperBound)
        connect(sending: rest, answeringConnect: true, context: context)
    }

    private func established(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
    }

    /// Closes the app's connection: AsyncHTTPClient takes it as a failed
    /// attempt to connect, and tries again until its connect timeout.
    private func refuse(context: ChannelHandlerContext) {
        state = .closed
        context.close(promise: nil)
    }

    // MARK: - The server's connection

    private func makeUpstream(context: ChannelHandlerContext) -> EventLoopFuture<Channel> {
        guard let target else { return context.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        return ClientBootstrap(group: context.eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TunnelBackHandler(front: bound.value))
                }
            }
            .connect(host: target.host, port: target.port)
    }

    /// Makes a new server connection and sends it `bytes` (the app's first
    /// since the last one was detached); the app's connection closes when
    /// none can be made. `answeringConnect`: this is the `CONNECT`'s own,
    /// which the app waits to hear of.
    private func connect(sending bytes: ByteBuffer, answeringConnect: Bool = false, context: ChannelHandlerContext) {
        state = .connecting(pending: bytes)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        makeUpstream(context: context).whenComplete { result in
            let (handler, context) = bound.value
            guard case .connecting(let pending) = handler.state else {
                if case .success(let upstream) = result { upstream.close(promise: nil) }
                return
            }
            switch result {
            case .success(let upstream):
                if answeringConnect { handler.established(context: context) }
                handler.opened(upstream, sending: pending, context: context)
            case .failure where answeringConnect && handler.agent.controlPolicy.canChange:
                // The viewer may answer without the server: let the app's
                // client through; a request that does need the server fails
                // when its bytes come and no connection can be made.
                handler.established(context: context)
                handler.state = .detached
                if pending.readableBytes > 0 { handler.connect(sending: pending, context: context) }
            case .failure:
                handler.refuse(context: context)
            }
        }
    }

    private func opened(_ upstream: Channel, sending pending: ByteBuffer, context: ChannelHandlerContext) {
        state = .open(upstream)
        if pending.readableBytes > 0 { upstream.writeAndFlush(pending, promise: nil) }
        upstream.read()
        context.read()
    }

    /// ``ControlTunnel/detachUpstream(clientPort:)``.
    func detach() {
        guard case .open(let upstream) = state else { return }
        state = .detached
        detaching = upstream
        upstream.close(promise: nil)
    }

    // MARK: - Called by the server connection's handler

    func upstreamRead(_ bytes: ByteBuffer, from upstream: Channel) {
        guard let context, case .open(let current) = state, current === upstream else { return }
        lastWrite = context.write(wrapOutboundOut(bytes))
    }

    func upstreamReadComplete(from upstream: Channel) {
        guard let context, case .open(let current) = state, current === upstream else { return }
        context.flush()
        if context.channel.isWritable { upstream.read() }
    }

    /// The server closed its connection (or the tunnel did): the app's
    /// closes too, after what the server sent, unless the tunnel detached it.
    func upstreamInactive(_ upstream: Channel) {
        if detaching === upstream {
            detaching = nil
            return
        }
        guard let context, case .open(let current) = state, current === upstream else { return }
        state = .closed
        let reset = upstreamWasReset
        guard let lastWrite else { return Self.close(context, reset: reset) }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        lastWrite.whenComplete { _ in Self.close(bound.value, reset: reset) }
    }

    private static func close(_ context: ChannelHandlerContext, reset: Bool) {
        // SO_LINGER 0: the close sends RST, as the server's did.
        guard reset, let options = context.channel as? SocketOptionProvider else { return context.close(promise: nil) }
        let channel = context.channel
        options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    func upstreamFailed(_ error: Error, _ upstream: Channel) {
        guard case .open(let current) = state, current === upstream else { return }
        if let error = error as? IOError, error.errnoCode == ECONNRESET { upstreamWasReset = true }
    }

    func upstreamWritabilityChanged(_ upstream: Channel) {
        guard let context, readPending, upstream.isWritable else { return }
        readPending = false
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if case .open(let upstream) = state, context.channel.isWritable { upstream.read() }
        context.fireChannelWritabilityChanged()
    }
}

/// The tunnel's connection to the server: hands everything to its front.
final class TunnelBackHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let front: TunnelFrontHandler

    init(front: TunnelFrontHandler) {
        self.front = front
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        front.upstreamRead(unwrapInboundIn(data), from: context.channel)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        front.upstreamReadComplete(from: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        front.upstreamInactive(context.channel)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        front.upstreamWritabilityChanged(context.channel)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        front.upstreamFailed(error, context.channel)
        context.close(promise: nil)
    }
}
#endif
