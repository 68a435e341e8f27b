import Foundation
import NIOCore
import NIOHTTP1

/// Section 10's loopback server: `GET /stream?rate=R&seconds=S` answers
/// `text/event-stream`, chunked, one server-sent event every 1/R seconds
/// for S seconds, then ends. Each event is the same size and carries the
/// time it was written on this process's monotonic clock, so the app (in
/// the same process) can tell how long each event took to reach it.
enum StreamServer {
    /// Bytes of every event, `data: …\n\n` included.
    static let eventSize = 64

    /// A server on loopback that answers `/stream` requests.
    static func start() throws -> BenchServer {
        try BenchServer { StreamHandler() }
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
        let interval = TimeAmount.nanoseconds(Int64(1e9 / rate))
        // The repeated task runs on this channel's loop: the context and
        // the count are only touched there.
        let state = NIOLoopBoundBox((context: context, sent: 0), eventLoop: context.eventLoop)
        task = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { task in
            let context = state.value.context
            guard state.value.sent < total, context.channel.isActive else {
                task.cancel()
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
                return
            }
            state.value.sent += 1
            let event = StreamServer.event(sentAt: DispatchTime.now().uptimeNanoseconds)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(event))), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        task?.cancel()
        context.fireChannelInactive()
    }
}
