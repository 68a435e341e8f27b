/// How netinspect writes a socket address: a flow's `peer` and
/// `localAddress`, an agent's or an exporter's address in the event log.
/// One form everywhere, because the viewer links a call to the captured
/// service that received it by comparing these texts from two processes,
/// and names an OpenTelemetry service by its exporter's host
/// (``URLAuthority/init(address:)`` reads them back).
///
/// ```swift
/// PeerAddress.text(host: "127.0.0.1", port: 53124)                 // "127.0.0.1:53124"
/// PeerAddress.text(host: "::1", port: 53124)                       // "[::1]:53124"
/// PeerAddress.text(ip: nil, port: nil, unixPath: "/run/app.sock")  // "unix:/run/app.sock"
/// ```
package enum PeerAddress {
    /// `host:port`, an IPv6 address in brackets.
    package static func text(host: String, port: Int) -> String {
        URLAuthority(host: host, port: port).text
    }

    /// An IP socket's address as ``text(host:port:)``, else a named Unix
    /// socket's as `unix:PATH` (the syntax of ``Endpoint``); nil when the
    /// socket has neither (an unnamed Unix socket's client end).
    package static func text(ip: String?, port: Int?, unixPath: String?) -> String? {
        if let ip, let port { return text(host: ip, port: port) }
        if let unixPath, !unixPath.isEmpty { return "unix:" + unixPath }
        return nil
    }
}
