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

    /// Creates a Unix stream socket bound at `path` with mode 0600, for NIO
    /// to listen on. Binding it here rather than in NIO also keeps NIO from
    /// deleting the path when the channel closes, whoever's file it is by then.
    /// - Returns: the socket's descriptor, non-blocking.
    static func bindPrivately(_ path: String) throws(ListenerError) -> Int32 {
        let descriptor = socket(AF_UNIX, socketType(nonBlocking: true), 0)
        guard descriptor >= 0 else { throw .bindFailed(.unix(path: path), reason: lastErrorText()) }
        // The umask makes the file 0600 from the moment it exists; the chmod
        // holds even if another thread changed the umask meanwhile.
        let previousMask = umask(0o177)
        let bound = withAddress(path) { bind(descriptor, $0, $1) } == 0
        let reason = lastErrorText()
        umask(previousMask)
        guard bound, chmod(path, 0o600) == 0 else {
            if bound { unlink(path) }
            close(descriptor)
            throw .bindFailed(.unix(path: path), reason: bound ? "chmod 0600: \(lastErrorText())" : reason)
        }
        return descriptor
    }

    /// Whether the socket at `path` is served by this process: the
    /// listener's credentials, which the kernel hands to whoever connects.
    /// Shutdown asks before removing the file, so a file someone put in its
    /// place since (another netinspect, after ours was deleted by hand) stays.
    /// Inode numbers cannot tell: the file system reuses them at once.
    static func isServedByThisProcess(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, socketType(nonBlocking: true), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard withAddress(path, { connect(descriptor, $0, $1) }) == 0 else { return false }
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: Glibc only
        // exports it to C with _GNU_SOURCE, so read it as three Int32s.
        var credentials: [Int32] = [0, 0, 0]
        var length = socklen_t(MemoryLayout<Int32>.size * credentials.count)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return false }
        return credentials[0] == getpid()
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
