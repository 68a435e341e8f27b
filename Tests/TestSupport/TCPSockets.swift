#if canImport(Glibc)
import Glibc
#endif
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
            String(decoding: wholeFile(table), as: UTF8.self).split(separator: "\n").dropFirst().contains { row in
                // "sl local_address rem_address st ...": addresses are
                // HEX_IP:HEX_PORT, and state 01 is ESTABLISHED.
                let fields = row.split(separator: " ")
                guard fields.count > 3, fields[3] == "01", let remotePort = fields[2].split(separator: ":").last else { return false }
                return Int(remotePort, radix: 16) == port
            }
        }
    }

    /// Every byte of a /proc file, read to its end: such a file says its
    /// size is 0 and comes a page per read, and `String(contentsOfFile:)`
    /// stops after the first (a table of a few dozen sockets lost its rows).
    private static func wholeFile(_ path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return bytes }
            bytes += buffer[..<count]
        }
    }
}
