import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the agent sends and the inspector listens: a Unix socket path or a
/// TCP host and port.
///
/// Written as `unix:PATH` or `tcp:HOST:PORT` (`tcp:[::1]:9123` for IPv6), the
/// syntax of `$NETINSPECT` and of `netinspect --listen`.
public enum Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// A Unix domain socket at `path`.
    case unix(path: String)
    /// A TCP address.
    case tcp(host: String, port: Int)

    /// The environment variable the agent reads its destination from.
    public static let environmentVariable = "NETINSPECT"

    /// The environment variable that allows a viewer's control (rules,
    /// breakpoints) without a code change when set to `1`: the agent reads
    /// it, and `netinspect -- COMMAND` sets it when control was asked for.
    ///
    /// ```swift
    /// setenv(Endpoint.controlEnvironmentVariable, "1", 1)
    /// ```
    public static let controlEnvironmentVariable = "NETINSPECT_CONTROL"

    /// The longest Unix socket path the kernel accepts, in bytes.
    package static let maximumUnixPathLength = 103

    /// Why a string is not an endpoint.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, for a person.
        public var description: String
    }

    /// Parses `unix:PATH` or `tcp:HOST:PORT`.
    public init(parsing text: String) throws(ParseError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else { throw ParseError(description: "'\(text)': unix: needs a socket path") }
            guard path.utf8.count <= Self.maximumUnixPathLength else {
                throw ParseError(description: "'\(text)': socket path is \(path.utf8.count) bytes, the limit is \(Self.maximumUnixPathLength)")
            }
            self = .unix(path: path)
        } else if text.hasPrefix("tcp:") {
            let rest = String(text.dropFirst("tcp:".count))
            guard rest.utf8.contains(UInt8(ascii: ":")) else { throw ParseError(description: "'\(text)': expected tcp:HOST:PORT") }
            let authority = URLAuthority(address: rest)
            guard !authority.host.isEmpty else { throw ParseError(description: "'\(text)': tcp: needs a host") }
            guard let port = authority.port else {
                if !rest.hasPrefix("["), authority.host.utf8.contains(UInt8(ascii: ":")) {
                    throw ParseError(description: "'\(text)': an IPv6 address takes brackets: tcp:[ADDRESS]:PORT")
                }
                throw ParseError(description: "'\(text)': port must be a number from 0 to 65535")
            }
            self = .tcp(host: authority.host, port: port)
        } else {
            throw ParseError(description: "'\(text)': expected unix:PATH or tcp:HOST:PORT")
        }
    }

    /// The endpoint both sides use when nothing is configured:
    /// `$XDG_RUNTIME_DIR/netinspect.sock`, else `/tmp/netinspect-<uid>.sock`.
    public static func defaultEndpoint(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        userID: UInt32 = getuid()
    ) -> Endpoint {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return .unix(path: (runtime.hasSuffix("/") ? runtime : runtime + "/") + "netinspect.sock")
        }
        return .unix(path: "/tmp/netinspect-\(userID).sock")
    }

    /// Whether a TCP host is on this machine only (127.0.0.0/8, ::1, localhost).
    package static func isLoopback(host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case let .tcp(host, port): "tcp:" + PeerAddress.text(host: host, port: port)
        }
    }
}
