import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import XCTest
@testable import CaptureAgent

/// A request exactly as the loopback server received it.
///
/// Equality compares the header fields as a multiset: Foundation on Linux
/// sends them in an order that varies between identical requests even
/// without the agent (pinned by `HeaderOrderTests`).
struct ReceivedRequest: Equatable, Sendable {
    var method: String
    var uri: String
    /// Header fields in the order they arrived, duplicates kept.
    var headers: [Pair]
    var body: [UInt8]

    static func == (lhs: ReceivedRequest, rhs: ReceivedRequest) -> Bool {
        func sorted(_ pairs: [Pair]) -> [Pair] {
            pairs.map(\.normalized).sorted { ($0.name.lowercased(), $0.value) < ($1.name.lowercased(), $1.value) }
        }
        return lhs.method == rhs.method && lhs.uri == rhs.uri && lhs.body == rhs.body && sorted(lhs.headers) == sorted(rhs.headers)
    }

    struct Pair: Equatable, Sendable, CustomStringConvertible {
        var name: String
        var value: String
        var description: String { "\(name): \(value)" }

        /// The cookie storage lists cookies in an order of its own that
        /// varies between runs: compare a Cookie field's cookies as a set.
        var normalized: Pair {
            guard name.lowercased() == "cookie" else { return self }
            return Pair(name: name, value: value.components(separatedBy: "; ").sorted().joined(separator: "; "))
        }
    }
}

/// What the server answers: status, headers in order (duplicates allowed),
/// and the body, optionally after a delay or dripped in timed chunks.
struct ScriptedResponse: Sendable {
    var status: Int = 200
    var headers: [(String, String)] = []
    var body: [UInt8] = []
    /// Wait this long before sending anything.
    var delay: TimeAmount = .zero
    /// When set, the body is sent in these chunks, `interval` apart, with
    /// chunked transfer encoding.
    var drip: (chunks: [[UInt8]], interval: TimeAmount)?
    /// When set, `pattern(count:)` of this length, written 64 KiB at a time,
    /// each write after the previous one was flushed (nothing large in memory).
    var streamedLength: Int?
    /// An HTTP/1.0 answer with no `Content-Length`: the body ends where the
    /// server closes the connection, as `python3 -m http.server` answers.
    var closeDelimited = false
    /// No answer: the connection is reset (`SO_LINGER` 0, then close).
    var resets = false
}

/// An HTTP/1.1 server on 127.0.0.1, inside the test process, built on
/// SwiftNIO: records every request and answers by path.
///
/// Paths:
/// - `/text`: 200, a short text body
/// - `/auth`: 401 with a Basic challenge, 200 with `Authorization` for user:pass
/// - `/echo`: 200, echoes the request body and method
/// - `/status/N`: status N (with a short body unless 204/304)
/// - `/redirect/N?to=PATH`: status N with `Location: PATH`
/// - `/dup-headers`: 200 with `Set-Cookie` and `X-Dup` twice each
/// - `/binary/N`: N bytes of a fixed pattern
/// - `/gzip`: a gzip-encoded text body (`Content-Encoding: gzip`)
/// - `/slow/MS`: 200 after MS milliseconds
/// - `/drip/N`: 200 with N chunks (default 100) of 1 KiB, 50 ms apart
/// - `/stream/N`: N bytes of `pattern(count:)`, streamed with back-pressure
/// - `/close-delimited`: HTTP/1.0 200, a short text body ended by the server's close
/// - `/reset`: no answer; the connection is reset
final class TestHTTPServer: @unchecked Sendable {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    private let channel: Channel
    private let received = Locked<[ReceivedRequest]>([])
    private let counters = ServerCounters()
    let port: Int

    init() throws {
        let box = received, counters = counters
        channel = try ServerBootstrap(group: Self.group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RecordingHandler(counters: counters, record: { request in box.withLock { $0.append(request) } }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel.close().wait()
    }

    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    var requests: [ReceivedRequest] { received.current }

    /// Takes what was received once no request is part way in: an exchange
    /// the app has given up on (timed out, cancelled) may still be arriving,
    /// and is either received whole or dropped with its connection.
    func takeRequestsOnceArrived() -> [ReceivedRequest] {
        XCTAssertTrue(eventually { counters.arriving.current == 0 }, "a request is still arriving at the loopback server")
        return takeRequests()
    }

    /// The chunks of `/drip/N` bodies written so far, over every connection.
    var chunksDripped: Int { counters.dripped.current }

    func takeRequests() -> [ReceivedRequest] {
        received.withLock { all in
            defer { all = [] }
            return all
        }
    }

    static let textBody = Array("hello from the loopback server\n".utf8)
    /// "netinspect gzip body line\n" × 200, gzip-compressed.
    static let gzipPlain = Array(String(repeating: "netinspect gzip body line\n", count: 200).utf8)
    static let gzipBody = Array(Data(base64Encoded:
        "H4sIAAAAAAACA+3JsQmAQAwAwN4pMpsaJCDxwW90emt3uGuvc1bfI7cZx1sj1mt/4qzOpY0xxhhjjDHGGGOMMeY3H6q4uwdQFAAA")!)

    static func pattern(count: Int) -> [UInt8] {
        (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    static func route(_ request: ReceivedRequest) -> ScriptedResponse {
        let parts = request.uri.split(separator: "?", maxSplits: 1)
        let path = String(parts.first ?? "")
        let query = parts.count > 1 ? String(parts[1]) : ""
        let segments = path.split(separator: "/").map(String.init)
        var response = ScriptedResponse()
        switch segments.first ?? "" {
        case "text":
            response.headers = [("Content-Type", "text/plain; charset=utf-8")]
            response.body = textBody
        case "auth":
            let authorized = request.headers.contains { $0.name.lowercased() == "authorization" && $0.value == "Basic dXNlcjpwYXNz" }
            response.status = authorized ? 200 : 401
            response.headers = authorized ? [("Content-Type", "text/plain")] : [("WWW-Authenticate", #"Basic realm="netinspect""#)]
            response.body = Array((authorized ? "welcome\n" : "denied\n").utf8)
        case "echo":
            response.headers = [("Content-Type", "application/octet-stream"), ("X-Method", request.method)]
            response.body = request.body
        case "header":
            // The value of the request's header named by the next segment:
            // responses that differ for requests that match alike.
            let name = segments.count > 1 ? segments[1].lowercased() : ""
            response.headers = [("Content-Type", "text/plain")]
            response.body = Array((request.headers.first { $0.name.lowercased() == name }?.value ?? "none").utf8)
        case "status":
            response.status = Int(segments.count > 1 ? segments[1] : "") ?? 500
            if response.status != 204 && response.status != 304 {
                response.headers = [("Content-Type", "text/plain")]
                response.body = Array("status \(response.status)\n".utf8)
            }
        case "redirect":
            response.status = Int(segments.count > 1 ? segments[1] : "") ?? 302
            let target = query.hasPrefix("to=") ? String(query.dropFirst(3)) : "/text"
            response.headers = [("Location", target.removingPercentEncoding ?? target)]
            response.body = Array("moved\n".utf8)
        case "dup-headers":
            response.headers = [
                ("Set-Cookie", "a=1; Path=/"), ("X-Dup", "first"), ("Content-Type", "text/plain"),
                ("Set-Cookie", "b=2; Path=/"), ("X-Dup", "second"),
            ]
            response.body = Array("dup\n".utf8)
        case "binary":
            response.headers = [("Content-Type", "application/octet-stream")]
            response.body = pattern(count: Int(segments.count > 1 ? segments[1] : "") ?? 0)
        case "gzip":
            response.headers = [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")]
            response.body = gzipBody
        case "slow":
            response.delay = .milliseconds(Int64(segments.count > 1 ? segments[1] : "") ?? 1000)
            response.body = textBody
        case "stream":
            response.headers = [("Content-Type", "application/octet-stream")]
            response.streamedLength = Int(segments.count > 1 ? segments[1] : "") ?? 0
        case "close-delimited":
            response.headers = [("Content-Type", "text/plain; charset=utf-8")]
            response.body = textBody
            response.closeDelimited = true
        case "reset":
            response.resets = true
        case "drip":
            response.headers = [("Content-Type", "application/octet-stream")]
            let count = Int(segments.count > 1 ? segments[1] : "") ?? 100
            response.drip = (Array(repeating: pattern(count: 1024), count: count), .milliseconds(50))
        default:
            response.status = 404
            response.body = Array("no route\n".utf8)
        }
        if request.method == "OPTIONS" { response.headers.append(("Allow", "GET, HEAD, OPTIONS, PURGE")) }
        return response
    }
}

/// What a test server's connections count for the tests to wait on.
final class ServerCounters: Sendable {
    /// Requests whose head has been read and whose end has not, on
    /// connections still open.
    let arriving = Locked(0)
    /// Chunks of dripped bodies written.
    let dripped = Locked(0)
}

final class RecordingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let record: @Sendable (ReceivedRequest) -> Void
    private let counters: ServerCounters
    private var current: ReceivedRequest?
    private var isHead = false

    init(counters: ServerCounters = ServerCounters(), record: @escaping @Sendable (ReceivedRequest) -> Void) {
        self.counters = counters
        self.record = record
    }

    func channelInactive(context: ChannelHandlerContext) {
        if current != nil {
            current = nil
            counters.arriving.withLock { $0 -= 1 }
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            isHead = head.method == .HEAD
            if current == nil { counters.arriving.withLock { $0 += 1 } }
            current = ReceivedRequest(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { ReceivedRequest.Pair(name: $0.name, value: $0.value) },
                body: []
            )
        case .body(let buffer):
            current?.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let request = current else { return }
            current = nil
            record(request)
            counters.arriving.withLock { $0 -= 1 }
            respond(TestHTTPServer.route(request), head: isHead, channel: context.channel)
        }
    }

    private func respond(_ response: ScriptedResponse, head isHead: Bool, channel: Channel) {
        let dripped = counters.dripped
        let send: @Sendable () -> Void = {
            if response.resets, let options = channel as? SocketOptionProvider {
                options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
                return
            }
            var headers = HTTPHeaders(response.headers)
            if let length = response.streamedLength {
                headers.replaceOrAdd(name: "Content-Length", value: String(length))
                channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)), promise: nil)
                Self.stream(remaining: isHead ? 0 : length, offset: 0, period: ByteBuffer(bytes: TestHTTPServer.pattern(count: 1 << 16)), on: channel)
                return
            }
            if response.closeDelimited {
                let head = HTTPResponseHead(version: .http1_0, status: .init(statusCode: response.status), headers: headers)
                channel.write(HTTPServerResponsePart.head(head), promise: nil)
                if !isHead { channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: response.body))), promise: nil) }
                channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
                return
            }
            if response.drip == nil {
                headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            } else {
                headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
            }
            let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: response.status), headers: headers)
            channel.write(HTTPServerResponsePart.head(head), promise: nil)
            if let drip = response.drip {
                Self.drip(drip.chunks[...], every: drip.interval, on: channel, counting: dripped)
                return
            }
            if !isHead, !response.body.isEmpty {
                channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: response.body))), promise: nil)
            }
            channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
        }
        if response.delay == .zero {
            send()
        } else {
            channel.eventLoop.scheduleTask(in: response.delay, send)
        }
    }

    /// `pattern(count:)` repeats every 64 KiB, so one period serves any length.
    private static func stream(remaining: Int, offset: Int, period: ByteBuffer, on channel: Channel) {
        guard remaining > 0 else {
            channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
            return
        }
        let start = offset % period.readableBytes
        let count = min(remaining, period.readableBytes - start)
        let slice = period.getSlice(at: period.readerIndex + start, length: count)!
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(slice))).whenSuccess {
            // Not from inside the callback: a write that completes at once would recurse.
            channel.eventLoop.execute {
                stream(remaining: remaining - count, offset: offset + count, period: period, on: channel)
            }
        }
    }

    private static func drip(_ chunks: ArraySlice<[UInt8]>, every interval: TimeAmount, on channel: Channel, counting dripped: Locked<Int>) {
        guard let first = chunks.first else {
            channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
            return
        }
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: first))), promise: nil)
        dripped.withLock { $0 += 1 }
        let rest = chunks.dropFirst()
        guard channel.isActive else { return }
        channel.eventLoop.scheduleTask(in: interval) { drip(rest, every: interval, on: channel, counting: dripped) }
    }
}
