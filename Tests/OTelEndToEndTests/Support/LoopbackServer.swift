// Built with the SwiftOTel trait (on by default; Package.swift).
#if SwiftOTel
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server on 127.0.0.1 inside the test process, on SwiftNIO,
/// answering by path:
///
/// - `/items`: 200, a JSON body, a request id and a `Set-Cookie` (which the
///   agent's log redacts)
/// - `/orders` (POST): 201 with `Location`, saying how many bytes it got
/// - `/boom`: 500 with a short body
/// - anything else: 404 with a short body
final class LoopbackServer: Sendable {
    /// The cookie's value; it must reach the app and never the inspector.
    static let cookieSecret = "cookie-secret-7f3a"

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel
    let port: Int

    init() throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RouteHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    static func route(method: HTTPMethod, uri: String, body: Int) -> (status: HTTPResponseStatus, headers: [(String, String)], body: String) {
        let path = String(uri.prefix { $0 != "?" })
        switch (method, path) {
        case (.GET, "/items"):
            return (.ok, [("Content-Type", "application/json"), ("X-Request-Id", "req-42"),
                          ("Set-Cookie", "session=\(cookieSecret); Path=/")], #"[{"sku":9,"name":"widget"}]"#)
        case (.POST, "/orders"):
            return (.created, [("Content-Type", "text/plain"), ("Location", "/orders/7")], "created from \(body) bytes\n")
        case (_, "/boom"):
            return (.internalServerError, [("Content-Type", "text/plain")], "boom\n")
        default:
            return (.notFound, [("Content-Type", "text/plain")], "no route\n")
        }
    }
}

private final class RouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var head: HTTPRequestHead?
    private var bodyBytes = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyBytes = 0
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
        case .end:
            guard let head else { return }
            let answer = LoopbackServer.route(method: head.method, uri: head.uri, body: bodyBytes)
            var headers = HTTPHeaders(answer.headers)
            headers.add(name: "Content-Length", value: String(answer.body.utf8.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: answer.status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: answer.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            self.head = nil
        }
    }
}
#endif
