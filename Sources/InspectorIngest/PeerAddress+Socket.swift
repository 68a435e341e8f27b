import NIOCore
import WireProtocol

extension PeerAddress {
    /// Who is at the other end of an accepted connection, for the event log
    /// and the OTLP receiver's service names: the remote address, else (a
    /// Unix socket's client, which has no name) the socket it came in on.
    ///
    /// ```swift
    /// PeerAddress.of(remote: channel.remoteAddress, local: channel.localAddress)   // "[::1]:50312"
    /// ```
    package static func of(remote: SocketAddress?, local: SocketAddress?) -> String {
        text(ip: remote?.ipAddress, port: remote?.port, unixPath: nil)
            ?? text(ip: nil, port: nil, unixPath: local?.pathname)
            ?? "unknown peer"
    }
}
