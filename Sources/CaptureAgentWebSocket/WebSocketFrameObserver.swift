// Built with the Hummingbird or Vapor trait (both on by default; Package.swift).
#if Hummingbird || Vapor
import CaptureAgent
import NIOCore
import NIOWebSocket
import WireProtocol

/// Watches the frames of one upgraded WebSocket connection and reports
/// each message, ping, pong and close to its ``WebSocketRecording``; ends
/// the flow when the connection closes. It sits right after SwiftNIO's
/// frame decoder (and so right before its encoder), where every framework
/// built on SwiftNIO (hummingbird-websocket's WSCore, websocket-kit) passes
/// the frames it reads and writes:
///
/// ```swift
/// try WebSocketFrameObserver.install(on: channel.pipeline.syncOperations, recording: recording, side: .server)
/// ```
///
/// Transparent: each frame is passed on at once, as it came, in the same
/// event-loop turn; the observer only reads the first bytes of a payload
/// that the message can still keep (a masked one unmasked into a copy),
/// and never buffers, delays or changes a frame. Confined to the channel's
/// event loop, as every channel handler is.
package final class WebSocketFrameObserver: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = WebSocketFrame
    package typealias InboundOut = WebSocketFrame
    package typealias OutboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    /// Which end of the connection the app is.
    package enum Side: Sendable {
        /// The app accepted the connection: frames it reads go from client to server.
        case server
        /// The app opened the connection: frames it writes go from client to server.
        case client
    }

    private let recording: WebSocketRecording
    private let side: Side
    private var frames: WebSocketFrames
    private var failure: FlowError?

    package init(recording: WebSocketRecording, side: Side) {
        self.recording = recording
        self.side = side
        // An unbuilt flow keeps no bytes; its messages are still told apart, to be counted.
        frames = WebSocketFrames(limit: recording.bodyLimit)
    }

    /// Puts an observer right after the channel's WebSocket frame decoder.
    /// Call it on the channel's event loop, once the upgrade has added the
    /// decoder and before any frame has gone either way.
    package static func install(on pipeline: ChannelPipeline.SynchronousOperations, recording: WebSocketRecording, side: Side) throws {
        let decoder = try pipeline.context(handlerType: ByteToMessageHandler<WebSocketFrameDecoder>.self)
        try pipeline.addHandler(WebSocketFrameObserver(recording: recording, side: side), position: .after(decoder.handler))
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        observe(unwrapInboundIn(data), going: side == .server ? .request : .response)
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        observe(unwrapOutboundIn(data), going: side == .server ? .response : .request)
        context.write(data, promise: promise)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil { failure = FlowFailure.describe(error) }
        context.fireErrorCaught(error)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        recording.closed(cleanly: frames.closedBothWays, error: failure)
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        // Removed with the connection still open (the app rebuilt its
        // pipeline): the frames from now on go unseen, so the flow ends here.
        if context.channel.isActive { recording.closed(cleanly: frames.closedBothWays, error: failure) }
    }

    private func observe(_ frame: WebSocketFrame, going direction: StreamDirection) {
        let opcode = UInt8(webSocketOpcode: frame.opcode)
        let data = frame.data
        let wanted = min(data.readableBytes, frames.wanted(direction, opcode: opcode))
        // Frames read from the network carry the payload masked (a client's);
        // frames written carry it plain and the encoder masks it.
        let maskKey = direction == (side == .server ? .request : .response) ? frame.maskKey : nil
        let complete = data.withUnsafeReadableBytes { raw -> WebSocketFrames.Complete? in
            let prefix = UnsafeRawBufferPointer(rebasing: raw.prefix(wanted))
            guard let maskKey else {
                return frames.frame(direction, opcode: opcode, fin: frame.fin, size: data.readableBytes, payload: prefix)
            }
            // A masked extension-data prefix would shift the mask; no
            // extension the frameworks negotiate here sends one.
            var plain = [UInt8](prefix)
            for index in plain.indices { plain[index] ^= maskKey[index % 4] }
            return plain.withUnsafeBytes { frames.frame(direction, opcode: opcode, fin: frame.fin, size: data.readableBytes, payload: $0) }
        }
        if let complete { recording.message(direction, complete) }
    }
}
#endif
