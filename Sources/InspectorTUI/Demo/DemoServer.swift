#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The demo's HTTP/1.1 server: SwiftNIO on 127.0.0.1, on a port the kernel
/// picks, answering the routes of ``DemoRoutes``. Loopback only, always.
///
/// It also holds a second loopback port that is bound but never listens, so
/// connecting to ``refusedPort`` is refused at once (and no other program can
/// take the port while the demo runs).
final class DemoServer: Sendable {
    /// The port the server listens on.
    let port: Int
    /// A loopback port that refuses connections.
    let refusedPort: Int

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let refusingSocket: Int32

    /// Binds both ports.
    init() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(DemoHTTPHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
            (refusingSocket, refusedPort) = try Self.bindWithoutListening()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        port = channel.localAddress?.port ?? 0
    }

    /// Closes the listening socket, the open connections and the refusing port.
    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
        close(refusingSocket)
    }

    struct SocketError: Error, CustomStringConvertible {
        var description: String
    }

    /// A TCP socket bound to 127.0.0.1 on an ephemeral port, not listening:
    /// the kernel answers connection attempts with a reset.
    private static func bindWithoutListening() throws -> (Int32, Int) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SocketError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw SocketError(description: "cannot bind a loopback port: \(reason)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A request as the demo server received it.
struct DemoRequest: Sendable {
    var method: String
    /// The path without the query.
    var path: String
    /// Query items, percent-decoded; the last one wins.
    var query: [String: String]
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    init(method: String, uri: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        let components = URLComponents(string: uri)
        self.method = method
        path = components?.path ?? uri
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of a header field, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// What the demo server answers.
struct DemoResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
    /// Wait this long before answering.
    var delay: TimeAmount = .zero
}

/// One connection: gathers each request, answers it with ``DemoRoutes``.
private final class DemoHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var request: DemoRequest?
    private var keepAlive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAlive = head.isKeepAlive
            request = DemoRequest(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) })
        case .body(let buffer):
            request?.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let request else { return }
            self.request = nil
            var response = DemoRoutes.respond(to: request)
            if let id = request.header("X-Request-ID") { response.headers.append(("X-Request-ID", id)) }
            Self.send(response, keepAlive: keepAlive, on: context.channel)
        }
    }

    private static func send(_ response: DemoResponse, keepAlive: Bool, on channel: any Channel) {
        let write: @Sendable () -> Void = {
            var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            headers.replaceOrAdd(name: "Server", value: "demo-shop/2.4 (SwiftNIO)")
            if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: response.status), headers: headers)
            channel.write(HTTPServerResponsePart.head(head), promise: nil)
            if !response.body.isEmpty {
                channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: response.body))), promise: nil)
            }
            let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
            if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
        }
        // A little server think time, so durations differ as they do for real.
        channel.eventLoop.scheduleTask(in: response.delay + .milliseconds(.random(in: 2 ... 60)), write)
    }
}
