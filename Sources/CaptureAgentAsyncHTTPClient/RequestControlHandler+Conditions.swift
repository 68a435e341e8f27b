// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The response's way to AsyncHTTPClient under a network condition: the
/// parts wait from the head's arrival for the condition's latency, and the
/// body goes on in slices at its pace. Before the capture handlers, so the
/// flow's times are the ones the app sees.
struct InboundPace {
    var latency: Duration
    var pacer: Pacer?
    var notBefore: ContinuousClock.Instant?
    var parts = CircularBuffer<HTTPClientResponsePart>()
    var slice: (buffer: ByteBuffer, due: ContinuousClock.Instant)?
    var timer: Scheduled<Void>?
    /// AsyncHTTPClient asked for more while parts waited: asked of the socket once they are through.
    var readPending = false

    /// Nil when `effect` neither waits nor paces.
    init?(_ effect: NetworkEffect) {
        guard effect.latency > .zero || effect.downBytesPerSecond != nil else { return nil }
        latency = effect.latency
        pacer = effect.downBytesPerSecond.map(Pacer.init(bytesPerSecond:))
    }
}

/// Carries out ``ExchangeControl/effect`` and a condition's failure in NIO's
/// terms. Waiting is a timer on the event loop, and while parts wait this
/// handler keeps AsyncHTTPClient's reads from the socket, so a slow pace
/// holds back what the server sends rather than keeping it all here.
extension RequestControlHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard pace != nil else { return context.fireChannelRead(data) }
        pace!.parts.append(unwrapInboundIn(data))
        if case .head? = pace!.parts.last, pace!.notBefore == nil { pace!.notBefore = .now + pace!.latency }
        drain(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Parts that wait are handed on with a read-complete of their own.
        guard pace != nil else { return context.fireChannelReadComplete() }
    }

    func read(context: ChannelHandlerContext) {
        guard let pace, !pace.parts.isEmpty || pace.slice != nil else { return context.read() }
        self.pace!.readPending = true
    }

    /// Whether parts wait for their time.
    var isPacingParts: Bool {
        guard let pace else { return false }
        return !pace.parts.isEmpty || pace.slice != nil
    }

    /// Hands on what is due, and sets a timer for the rest.
    private func drain(context: ChannelHandlerContext) {
        guard var current = pace else { return }
        var handed = false
        defer { if handed { context.fireChannelReadComplete() } }
        while true {
            let now = ContinuousClock.now
            if let slice = current.slice {
                if slice.due > now { return wait(&current, until: slice.due, context: context) }
                current.slice = nil
                pace = current
                handed = true
                context.fireChannelRead(wrapInboundOut(.body(slice.buffer)))
                // AsyncHTTPClient may ask for more, or close, from inside the read.
                guard let reloaded = pace else { return }
                current = reloaded
                continue
            }
            guard let part = current.parts.first else { break }
            if let start = current.notBefore, start > now { return wait(&current, until: start, context: context) }
            current.parts.removeFirst()
            switch part {
            case .body(var buffer) where current.pacer != nil:
                let size = min(buffer.readableBytes, current.pacer!.sliceSize)
                let slice = buffer.readSlice(length: size)!
                if buffer.readableBytes > 0 { current.parts.prepend(.body(buffer)) }
                current.slice = (slice, current.pacer!.due(afterSending: size, now: now))
            case .end:
                pace = nil
                handed = true
                context.fireChannelRead(wrapInboundOut(part))
                if current.readPending { context.read() }
                tellDeferredClose(context: context)
                return
            default:
                pace = current
                handed = true
                context.fireChannelRead(wrapInboundOut(part))
                guard let reloaded = pace else { return }
                current = reloaded
            }
        }
        pace = current
        if current.readPending {
            pace!.readPending = false
            context.read()
        }
    }

    private func wait(_ current: inout InboundPace, until time: ContinuousClock.Instant, context: ChannelHandlerContext) {
        pace = current
        guard current.timer == nil else { return }
        let delay = TimeAmount.nanoseconds(max(0, ContinuousClock.now.duration(to: time).nanoseconds))
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        pace!.timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = bound.value
            handler.pace?.timer = nil
            handler.drain(context: context)
        }
    }

    /// Forgets the pace and its timer (a new request, or AsyncHTTPClient closed the channel).
    func stopPacing() {
        pace?.timer?.cancel()
        pace = nil
        failureTimer?.cancel()
        failureTimer = nil
    }

    /// A condition failed the request: after its latency AsyncHTTPClient
    /// gets the error it gets for the same failure of a real connection, and
    /// the connection closes.
    func failAfterLatency(_ failure: NetworkFailure, context: ChannelHandlerContext) {
        let latency = exchange.controlled?.effect.latency ?? .zero
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // Never inside AsyncHTTPClient's own write: at the earliest, after it returns.
        failureTimer = context.eventLoop.scheduleTask(in: .nanoseconds(latency.nanoseconds)) {
            let (handler, context) = bound.value
            handler.failureTimer = nil
            context.fireErrorCaught(failure.asyncHTTPClientError)
            context.close(promise: nil)
            handler.tellDeferredClose(context: context)
        }
    }
}

extension NetworkFailure {
    /// What AsyncHTTPClient (and so Vapor's client) reports for the same
    /// failure: a reset is the socket's read error, passed on as it is
    /// (AsyncHTTPClient's request state machine fails the request with the
    /// error it is given); a timeout is its read timeout; no network is the
    /// connect error.
    package var asyncHTTPClientError: Error {
        switch self {
        case .reset: IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        case .timeout: HTTPClientError.readTimeout
        case .offline: IOError(errnoCode: ENETUNREACH, reason: "connect")
        }
    }
}
#endif
