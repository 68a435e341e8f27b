import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Section 10's loopback server: `GET /stream?rate=R&seconds=S` answers
/// `text/event-stream`, chunked, one server-sent event every 1/R seconds
/// for S seconds, then ends. Each event is the same size and carries the
/// time it was written on this process's monotonic clock, so the app (in
/// the same process) can tell how long each event took to reach it.
final class StreamServer: Sendable {
    /// Bytes of every event, `data: …\n\n` included.
    static let eventSize = 64

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    let port: Int

    init() throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(StreamHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// One event: `data: NANOSECONDS` padded with spaces to ``eventSize``.
    static func event(sentAt nanoseconds: UInt64) -> ByteBuffer {
        let text = "data: \(nanoseconds)"
        return ByteBuffer(string: text + String(repeating: " ", count: eventSize - 2 - text.utf8.count) + "\n\n")
    }

    /// The send time of an event read back, nil when the bytes are not one.
    static func sentAt(_ event: ArraySlice<UInt8>) -> UInt64? {
        let digits = event.dropFirst(6).prefix { $0 >= 48 && $0 <= 57 }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }
}

private final class StreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var query: [String: Double] = [:]
    private var task: RepeatedTask?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let items = URLComponents(string: head.uri)?.queryItems ?? []
            query = Dictionary(items.compactMap { item in item.value.flatMap(Double.init).map { (item.name, $0) } }) { $1 }
        case .body:
            break
        case .end:
            start(context: context)
        }
    }

    private func start(context: ChannelHandlerContext) {
        let rate = query["rate"] ?? 10, seconds = query["seconds"] ?? 1
        let total = Int(rate * seconds)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream")
        headers.add(name: "Cache-Control", value: "no-cache")
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        var sent = 0
        let interval = TimeAmount.nanoseconds(Int64(1e9 / rate))
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        task = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [self] task in
            let context = loopBound.value
            guard sent < total, context.channel.isActive else {
                task.cancel()
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            sent += 1
            let event = StreamServer.event(sentAt: DispatchTime.now().uptimeNanoseconds)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(event))), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        task?.cancel()
        context.fireChannelInactive()
    }
}
