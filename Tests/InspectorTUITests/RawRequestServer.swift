import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback HTTP/1.1 server that keeps each request head exactly as it
/// arrived, to hold what netinspect's own client records against what it
/// sent. Each answer closes its connection.
///
/// | path | answer |
/// |---|---|
/// | `/gzip` | 200, a JSON body gzip-compressed, `Content-Encoding: gzip` |
/// | `/redirect` | 302 to `/elsewhere`, body `moved` |
/// | `/auth` | 401 with a Basic challenge, body `denied` |
/// | `/big` | 200, 1.5 MiB of `x` |
/// | anything else | 200 `ok` |
final class RawRequestServer: Sendable {
    /// One request as received.
    struct Received: Sendable {
        var requestLine: String
        /// Each field line, name and value as on the wire, value trimmed.
        var fields: [(name: String, value: String)]
        var body: [UInt8]
    }

    /// `{"greeting":"hello, decoded"}`, gzip-compressed.
    static let gzipPlain = Array(#"{"greeting":"hello, decoded"}"#.utf8)
    static let gzipBody: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff, 0xab, 0x56, 0x4a, 0x2f, 0x4a, 0x4d, 0x2d, 0xc9, 0xcc, 0x4b,
        0x57, 0xb2, 0x52, 0xca, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x48, 0x49, 0x4d, 0xce, 0x4f, 0x49, 0x4d, 0x51, 0xaa, 0x05,
        0x00, 0x32, 0x03, 0xf6, 0xff, 0x1d, 0x00, 0x00, 0x00,
    ]
    static let bigSize = 3 << 19

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let received = NIOLockedValueBox<[Received]>([])

    init() throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let received = received
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RawRequestHandler { request in
                        received.withLockedValue { $0.append(request) }
                    })
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests received so far, oldest first.
    var requests: [Received] { received.withLockedValue { $0 } }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    static func answer(to requestLine: String) -> (head: String, body: [UInt8]) {
        let path = requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        switch path {
        case "/gzip": return ("200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip", gzipBody)
        case "/redirect": return ("302 Found\r\nLocation: /elsewhere\r\nContent-Type: text/plain", Array("moved".utf8))
        case "/auth": return ("401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"netinspect\"\r\nContent-Type: text/plain", Array("denied".utf8))
        case "/big": return ("200 OK\r\nContent-Type: text/plain", Array(repeating: UInt8(ascii: "x"), count: bigSize))
        default: return ("200 OK\r\nContent-Type: text/plain", Array("ok".utf8))
        }
    }
}

/// Reads one request (head, then a `Content-Length` body), reports it and answers.
private final class RawRequestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var bytes: [UInt8] = []
    private var answered = false
    private let report: (RawRequestServer.Received) -> Void

    init(report: @escaping (RawRequestServer.Received) -> Void) {
        self.report = report
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytes += unwrapInboundIn(data).readableBytesView
        guard !answered, let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = fields.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        guard bytes.count - end.upperBound >= length else { return }
        answered = true
        report(.init(requestLine: lines[0], fields: fields, body: Array(bytes[end.upperBound ..< end.upperBound + length])))
        let answer = RawRequestServer.answer(to: lines[0])
        var out = context.channel.allocator.buffer(capacity: answer.body.count + 200)
        out.writeString("HTTP/1.1 \(answer.head)\r\nContent-Length: \(answer.body.count)\r\nConnection: close\r\n\r\n")
        out.writeBytes(answer.body)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(out)).whenComplete { _ in channel.close(promise: nil) }
    }
}
