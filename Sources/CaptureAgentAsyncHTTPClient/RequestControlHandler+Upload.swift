// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1

/// The request body's way out under a network condition's `up`: parts are
/// written in slices at the pace, each part's promise completed when its
/// last slice is written, so AsyncHTTPClient's streaming writer waits for
/// the pace rather than this handler keeping the body.
struct OutboundPace {
    var pacer: Pacer
    var parts = CircularBuffer<(part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?)>()
    var slice: (buffer: ByteBuffer, promise: EventLoopPromise<Void>?, due: ContinuousClock.Instant)?
    var timer: Scheduled<Void>?

    init(bytesPerSecond: Int) {
        pacer = Pacer(bytesPerSecond: bytesPerSecond)
    }
}

extension RequestControlHandler {
    /// Queues a request part behind the pace and writes what is due.
    func pacedWrite(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        upload?.parts.append((part, promise))
        drainUpload(context: context)
    }

    private func drainUpload(context: ChannelHandlerContext) {
        while var current = upload {
            let now = ContinuousClock.now
            if let slice = current.slice {
                guard slice.due <= now else { return waitToUpload(&current, until: slice.due, context: context) }
                current.slice = nil
                upload = current
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(slice.buffer))), promise: slice.promise)
                continue
            }
            guard let next = current.parts.popFirst() else { return upload = current }
            let (part, promise) = next
            switch part {
            case .body(.byteBuffer(var buffer)) where buffer.readableBytes > 0:
                let size = min(buffer.readableBytes, current.pacer.sliceSize)
                let slice = buffer.readSlice(length: size)!
                let rest = buffer.readableBytes > 0
                if rest { current.parts.prepend((.body(.byteBuffer(buffer)), promise)) }
                current.slice = (slice, rest ? nil : promise, current.pacer.due(afterSending: size, now: now))
                upload = current
            case .end:
                upload = nil
                context.writeAndFlush(wrapOutboundOut(part), promise: promise)
                return
            default:
                // A file region, or an empty part: written as it is, in its turn.
                upload = current
                context.writeAndFlush(wrapOutboundOut(part), promise: promise)
            }
        }
    }

    private func waitToUpload(_ current: inout OutboundPace, until time: ContinuousClock.Instant, context: ChannelHandlerContext) {
        upload = current
        guard current.timer == nil else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let delay = TimeAmount.nanoseconds(max(0, ContinuousClock.now.duration(to: time).nanoseconds))
        upload!.timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = bound.value
            handler.upload?.timer = nil
            handler.drainUpload(context: context)
        }
    }

    /// The channel closes (or a new request starts): what waits fails as a write to a closed channel would.
    func stopUpload() {
        guard let current = upload else { return }
        upload = nil
        current.timer?.cancel()
        current.slice?.promise?.fail(ChannelError.ioOnClosedChannel)
        for (_, promise) in current.parts { promise?.fail(ChannelError.ioOnClosedChannel) }
    }
}
#endif
