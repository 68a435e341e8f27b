import NIOCore
import NIOHTTP1
import NIOPosix

/// The loopback HTTP/1.1 server of the bench: SwiftNIO on 127.0.0.1, an
/// ephemeral port, its own one-thread event loop group. What it answers is
/// the handler's; by default section 1's:
///
/// - `GET` (any path): 200 with a body of ``getBodySize`` bytes.
/// - `POST` (any path): reads and counts the body without keeping it, then
///   200 with the byte count as a short text body, so the client can check
///   that every byte arrived.
final class BenchServer: Sendable {
    static let getBodySize = 1024

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    let port: Int

    /// `makeHandler` makes each connection's request handler.
    init(_ makeHandler: @escaping @Sendable () -> any ChannelHandler = { BenchHTTPHandler() }) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(makeHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
    }

    /// Closes the listening socket and every connection.
    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

final class BenchHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let getBody: ByteBuffer = {
        var buffer = ByteBufferAllocator().buffer(capacity: BenchServer.getBodySize)
        buffer.writeRepeatingByte(UInt8(ascii: "x"), count: BenchServer.getBodySize)
        return buffer
    }()

    private var method: HTTPMethod = .GET
    private var keepAlive = true
    private var receivedBytes = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            method = head.method
            keepAlive = head.isKeepAlive
            receivedBytes = 0
        case .body(let buffer):
            receivedBytes += buffer.readableBytes
        case .end:
            let body: ByteBuffer
            if method == .POST {
                body = ByteBuffer(string: String(receivedBytes))
            } else {
                body = Self.getBody
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: method == .POST ? "text/plain" : "application/octet-stream")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}
