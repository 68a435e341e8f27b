import Foundation

/// The kernel's TCP sockets in this network namespace, as /proc/net/tcp and
/// /proc/net/tcp6 list them: how a test sees a server close connections
/// without owning either end.
///
/// ```swift
/// // Past the server's idle timeout: it has closed what the client kept open.
/// let closed = await waitUntil(timeout: 20) { !TCPSockets.anyEstablished(toPort: peer.port) }
/// ```
public enum TCPSockets {
    /// Whether a socket connected to `port` (as its remote end) is still
    /// established. False once the server at that port has closed every
    /// connection made to it (the client's end then waits in CLOSE_WAIT,
    /// or is gone), and when none was made.
    public static func anyEstablished(toPort port: Int) -> Bool {
        ["/proc/net/tcp", "/proc/net/tcp6"].contains { table in
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { return false }
            return text.split(separator: "\n").dropFirst().contains { row in
                // "sl local_address rem_address st ...": addresses are
                // HEX_IP:HEX_PORT, and state 01 is ESTABLISHED.
                let fields = row.split(separator: " ")
                guard fields.count > 3, fields[3] == "01", let remotePort = fields[2].split(separator: ":").last else { return false }
                return Int(remotePort, radix: 16) == port
            }
        }
    }
}
