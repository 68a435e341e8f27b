#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import Synchronization
import WireProtocol

/// What every connection of one listener shares.
final class ListenerContext: Sendable {
    let inbox: Inbox
    let token: String?
    let maximumFrameSize: Int
    let helloTimeout: Duration?
    private let lastConnectionNumber = Atomic<UInt64>(0)
    private let shuttingDown = Atomic<Bool>(false)

    init(configuration: ListenerConfiguration, inbox: Inbox) {
        self.inbox = inbox
        token = configuration.token
        maximumFrameSize = configuration.maximumFrameSize
        helloTimeout = configuration.helloTimeout
    }

    func nextConnectionID() -> ConnectionID {
        ConnectionID(lastConnectionNumber.add(1, ordering: .relaxed).newValue)
    }

    /// Set before the listener closes its connections, so they say why.
    var isShuttingDown: Bool {
        get { shuttingDown.load(ordering: .acquiring) }
        set { shuttingDown.store(newValue, ordering: .releasing) }
    }
}

/// One agent connection: bytes in, a ``MessageDecoder`` in the middle,
/// ``InboxEvent``s out.
///
/// The connection's last event is posted from `channelInactive`, whatever
/// closed it, so each connection ends with exactly one `disconnected` (after
/// its hello) or one `rejected` (before it). A connection that closes without
/// sending a byte posts nothing: that is another netinspect checking whether
/// this one is alive, or a port scan.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let shared: ListenerContext
    private var decoder: MessageDecoder
    private var peer = "unknown peer"
    private var connection: ConnectionID?
    private var receivedBytes = false
    /// Why we closed the connection; `nil` while open or when the peer closed it.
    private var closeReason: String?
    private var isClosing = false
    private var helloDeadline: Scheduled<Void>?

    init(shared: ListenerContext) {
        self.shared = shared
        decoder = MessageDecoder(maximumFrameSize: shared.maximumFrameSize)
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = Self.describe(remote: context.channel.remoteAddress, local: context.channel.localAddress)
        if let timeout = shared.helloTimeout {
            helloDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
                if self.connection == nil { self.close(context, reason: "no hello within \(timeout.secondsText)") }
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        let buffer = unwrapInboundIn(data)
        receivedBytes = receivedBytes || buffer.readableBytes > 0
        decoder.append(contentsOf: buffer.readableBytesView)
        do {
            while !isClosing, let message = try decoder.next() {
                receive(message, context)
            }
        } catch {
            close(context, reason: error.description)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context, reason: Self.readable(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloDeadline?.cancel()
        let reason = closeReason ?? endOfStreamReason()
        if let connection {
            shared.inbox.post(.disconnected(connection, reason: reason))
        } else if receivedBytes || closeReason != nil {
            shared.inbox.post(.rejected(peer: peer, reason: reason ?? "closed before sending a hello"))
        }
        context.fireChannelInactive()
    }

    private func receive(_ message: Message, _ context: ChannelHandlerContext) {
        if let connection {
            shared.inbox.post(.message(connection, message))
            return
        }
        // The decoder lets nothing but a hello through first.
        guard case .hello(let hello) = message else { return }
        if let token = shared.token, !Self.constantTimeEquals(hello.token, token) {
            close(context, reason: "wrong token")
            return
        }
        helloDeadline?.cancel()
        let id = shared.nextConnectionID()
        connection = id
        shared.inbox.post(.connected(id, hello, peer: peer))
    }

    private func close(_ context: ChannelHandlerContext, reason: String) {
        guard !isClosing else { return }
        isClosing = true
        closeReason = shared.isShuttingDown ? "inspector shut down" : reason
        context.close(promise: nil)
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

    static func describe(remote: SocketAddress?, local: SocketAddress?) -> String {
        if let remote, let ip = remote.ipAddress, let port = remote.port {
            return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        }
        return local?.pathname.map { "unix:\($0)" } ?? "unknown peer"
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
