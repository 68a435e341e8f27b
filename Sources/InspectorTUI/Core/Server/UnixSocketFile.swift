#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import WireProtocol

/// What sits at a Unix socket path, found without disturbing it.
///
/// NIO's `bind(unixDomainSocketPath:cleanupExistingSocketFile: true)` would
/// unlink a live listener's socket and take over silently; connecting first
/// tells a stale file (nobody answers) from another running netinspect.
enum UnixSocketFile: Equatable {
    /// Nothing there.
    case absent
    /// A socket file nobody listens on, left by a process that died.
    case stale
    /// A socket some process accepts connections on.
    case live
    /// A regular file, directory or anything else that is not a socket.
    case notASocket

    /// Looks at `path`.
    /// - Throws: ``ListenerError/bindFailed(_:reason:)`` when it cannot tell
    ///   (no permission to look, for instance).
    static func inspect(_ path: String) throws(ListenerError) -> UnixSocketFile {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return .absent }
            throw .bindFailed(.unix(path: path), reason: lastErrorText())
        }
        guard status.st_mode & mode_t(S_IFMT) == mode_t(S_IFSOCK) else { return .notASocket }

        let descriptor = socket(AF_UNIX, socketType(nonBlocking: true), 0)
        guard descriptor >= 0 else { throw .bindFailed(.unix(path: path), reason: lastErrorText()) }
        defer { close(descriptor) }
        let result = withAddress(path) { connect(descriptor, $0, $1) }
        if result == 0 { return .live }
        switch errno {
        case ECONNREFUSED: return .stale
        case ENOENT: return .absent
        // A non-blocking connect to a listener whose backlog is full.
        case EAGAIN, EINPROGRESS: return .live
        default: throw .bindFailed(.unix(path: path), reason: lastErrorText())
        }
    }

    /// The device and inode of the socket file at `path`, to recognise our
    /// own file at shutdown; `nil` when there is none.
    static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Device and inode: what makes a file the same file.
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// Calls `body` with a `sockaddr_un` for `path` (at most
    /// ``WireProtocol/Endpoint/maximumUnixPathLength`` bytes).
    static func withAddress<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(Endpoint.maximumUnixPathLength))
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// `SOCK_STREAM | SOCK_CLOEXEC`, optionally non-blocking.
    static func socketType(nonBlocking: Bool) -> Int32 {
        #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        #else
        SOCK_STREAM
        #endif
    }
}

/// `strerror(errno)`, e.g. "Permission denied".
func lastErrorText() -> String {
    String(cString: strerror(errno))
}
