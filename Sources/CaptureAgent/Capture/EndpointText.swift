/// How a flow writes a socket address (`peer`, `localAddress`): `ip:port`,
/// an IPv6 address in brackets. One form for every adapter, because the
/// viewer links a call to the captured service that received it by
/// comparing these texts from two processes.
///
/// ```swift
/// EndpointText.of(ip: "127.0.0.1", port: 53124)   // "127.0.0.1:53124"
/// EndpointText.of(ip: "::1", port: 53124)         // "[::1]:53124"
/// ```
package enum EndpointText {
    package static func of(ip: String, port: Int) -> String {
        ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
