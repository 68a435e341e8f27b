// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import CaptureAgent
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback HTTP `CONNECT` tunnel in the app's own process, through which
/// the AsyncHTTPClient clients of an app that allows control reach their
/// servers (`capture(&configuration)` sets it as the configuration's proxy).
///
/// AsyncHTTPClient lets the agent in only on a connection it has already
/// opened to the server, so without the tunnel every decision (hold, answer,
/// delay) is made on a connection the server owns: a hold dies at the
/// server's idle timeout, and a request cannot be answered when nothing
/// accepts the connection. Through the tunnel AsyncHTTPClient's connection
/// ends here, and the tunnel's own connection to the server is a detail it
/// can change: ``detachUpstream(clientPort:)`` closes it quietly before a
/// hold, and the request's bytes, when they come, go on a new one; when the
/// server cannot be reached at all and the viewer has something that may
/// answer without it (rules, server replay, breakpoints), the tunnel
/// still says yes to `CONNECT`.
///
/// Otherwise it is a byte pipe: bytes go both ways as they come, reads are
/// asked of one side only while the other can take writes, a server's close
/// closes the app's connection (after what the server sent is written).
/// AsyncHTTPClient uses `CONNECT` for `http` as for `https`, so the requests
/// on the tunnel are byte for byte what they are without it.
final class ControlTunnel: AgentAttachment {
    /// The port on 127.0.0.1 the tunnel listens on.
    let port: Int
    let agent: CaptureAgent
    private let listener: Channel
    /// The app's connections to the tunnel, by their local port (what
    /// AsyncHTTPClient's channel knows of itself).
    private let connections = NIOLockedValueBox<[Int: Connection]>([:])

    struct Connection: Sendable {
        let eventLoop: EventLoop
        let front: NIOLoopBound<TunnelFrontHandler>
    }

    /// The agent's tunnel, started on first use; nil once the agent stopped,
    /// or when no loopback port can be had (the client then goes direct).
    static func of(_ agent: CaptureAgent) -> ControlTunnel? {
        agent.attachments.attachment(ControlTunnel.self) { try? ControlTunnel(agent: agent) }
    }

    private init(agent: CaptureAgent) throws {
        self.agent = agent
        // Bound here, on the caller's thread, so the port is known before
        // `capture(&configuration)` returns, with no wait on an event loop
        // (the caller may be on one).
        let (descriptor, port) = try Self.listeningSocket()
        self.port = port
        let connections = self.connections
        listener = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { [agent] channel in
                channel.eventLoop.makeCompletedFuture {
                    let front = TunnelFrontHandler(agent: agent)
                    try channel.pipeline.syncOperations.addHandler(front)
                    if let clientPort = channel.remoteAddress?.port {
                        connections.withLockedValue {
                            $0[clientPort] = Connection(eventLoop: channel.eventLoop, front: NIOLoopBound(front, eventLoop: channel.eventLoop))
                        }
                        channel.closeFuture.whenComplete { _ in connections.withLockedValue { _ = $0.removeValue(forKey: clientPort) } }
                    }
                }
            }
            .withBoundSocket(descriptor)
            .wait()
    }

    func close() {
        listener.close(promise: nil)
    }

    /// Closes the tunnel's connection to the server behind the app's
    /// connection from `clientPort`, without closing the app's: its next
    /// bytes go on a new connection. The future completes (on the tunnel's
    /// event loop) once no byte can reach the old one; nil when the port is
    /// not a connection of this tunnel.
    func detachUpstream(clientPort: Int) -> EventLoopFuture<Void>? {
        guard let connection = connections.withLockedValue({ $0[clientPort] }) else { return nil }
        return connection.eventLoop.submit { connection.front.value.detach() }
    }

    /// A socket listening on 127.0.0.1 at a port the kernel picks.
    private static func listeningSocket() throws -> (NIOBSDSocket.Handle, Int) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, listen(descriptor, 128) == 0 else {
            let error = IOError(errnoCode: errno, reason: "bind/listen")
            closeDescriptor(descriptor)
            throw error
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}

private func closeDescriptor(_ descriptor: CInt) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}
#endif
