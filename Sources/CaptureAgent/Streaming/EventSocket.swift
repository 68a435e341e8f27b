import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import WireProtocol

/// The agent's one connection to the inspector: a blocking stream socket,
/// used only by the writer thread. Plain POSIX so the agent needs nothing but
/// Foundation.
///
/// Writes never raise SIGPIPE (`MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on
/// Darwin): a vanished inspector is an `EPIPE` error, not a dead host app.
struct EventSocket: ~Copyable {
    private(set) var descriptor: Int32
    /// Whether this is a Unix socket.
    let isUnix: Bool

    /// Whether ``unreadCharge()`` can see what the peer has not read: a
    /// Unix socket on Linux.
    var seesUnread: Bool {
        #if os(Linux)
        isUnix
        #else
        false
        #endif
    }

    enum Failure: Error, Equatable {
        case resolve(String)
        case system(call: String, errno: Int32)
        case timedOut
        /// The Unix socket's listener runs as another user: anyone can bind
        /// a path in /tmp first, and the flows (bodies, tokens) would go to them.
        case foreignListener(uid: UInt32, pid: Int32)
    }

    /// Connects to `endpoint`, waiting at most `timeout` seconds.
    init(connectingTo endpoint: Endpoint, timeout: TimeInterval) throws(Failure) {
        switch endpoint {
        case .unix(let path):
            descriptor = try Self.connectUnix(path: path, timeout: timeout)
            isUnix = true
        case let .tcp(host, port):
            descriptor = try Self.connectTCP(host: host, port: port, timeout: timeout)
            isUnix = false
        }
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }
    }

    /// Writes all of `data`; throws when the peer is gone or the socket was shut down.
    func send(_ data: some ContiguousBytes) throws(Failure) {
        let result: Failure? = data.withUnsafeBytes { raw -> Failure? in
            guard var pointer = raw.baseAddress, raw.count > 0 else { return nil }
            var remaining = raw.count
            while remaining > 0 {
                let written = sendNoSignal(descriptor, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return .system(call: "send", errno: errno)
                }
                if written == 0 { return .system(call: "send", errno: EPIPE) }
                pointer += written
                remaining -= written
            }
            return nil
        }
        if let result { throw result }
    }

    /// On a Linux Unix socket: the kernel memory still charged to this end
    /// for data the peer has not consumed (`SIOCOUTQ`; skb truesize, not
    /// payload bytes; see ``UnreadFrames``). `nil` elsewhere, and when the
    /// value means nothing: it reads 0 once the peer's socket is gone, so a
    /// 0 alongside a pending error (the peer died with unread data) is not
    /// reported.
    func unreadCharge() -> Int? {
        #if os(Linux)
        guard seesUnread else { return nil }
        var charge: Int32 = 0
        guard ioctl(descriptor, UInt(TIOCOUTQ), &charge) == 0 else { return nil }
        if charge > 0 { return Int(charge) }
        var pollDescriptor = pollfd(fd: descriptor, events: 0, revents: 0)
        if poll(&pollDescriptor, 1, 0) > 0, pollDescriptor.revents & Int16(POLLERR | POLLNVAL) != 0 { return nil }
        return 0
        #else
        return nil
        #endif
    }

    /// After a failed write: whether the peer's socket went away holding
    /// data it had not read. Linux marks this end `ECONNRESET` then, and
    /// leaves it clear when the peer had read everything before closing.
    /// Reading it clears it.
    func peerLeftUnreadData() -> Bool {
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return true }
        return error == ECONNRESET
    }

    /// What a non-blocking read found.
    enum Incoming {
        /// Bytes the inspector sent.
        case bytes([UInt8])
        /// Nothing waiting now.
        case nothing
        /// The peer closed its end or reset the connection.
        case closed
    }

    /// Reads what the inspector has sent, without blocking. Bytes already
    /// received stay readable after the peer has gone, so the last
    /// receipts of a killed inspector can still be read.
    func receive() -> Incoming {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count > 0 { return .bytes(Array(scratch[0 ..< count])) }
            if count == 0 { return .closed }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .nothing : .closed
        }
    }

    /// Waits at most `timeout` for bytes from the peer (or its close).
    func waitForIncoming(timeout: TimeInterval) -> Bool {
        var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&pollDescriptor, 1, Int32(max(0, timeout * 1000))) > 0
    }

    /// Ends our side of a connection the peer still holds: stops writing,
    /// then reads and discards what comes until the peer closes
    /// or `timeout` passes. Closing with bytes unread would make the kernel
    /// reset the connection, and the inspector would log the agent's
    /// orderly goodbye as "Connection reset by peer".
    func finishGracefully(timeout: TimeInterval) {
        _ = shutdown(descriptor, Int32(SHUT_WR))
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            switch receive() {
            case .bytes:
                continue
            case .closed:
                return
            case .nothing:
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return }
                var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&pollDescriptor, 1, Int32(max(1, remaining * 1000)))
            }
        }
    }

    // MARK: - Connecting

    private static func connectUnix(path: String, timeout: TimeInterval) throws(Failure) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { throw .system(call: "connect", errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
            buffer[pathBytes.count] = 0
        }
        let fd = try makeSocket(family: AF_UNIX)
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let outcome = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connectWithTimeout(fd, $0, length, timeout) }
        } ?? checkListenerOwner(fd)
        if let outcome {
            _ = close(fd)
            throw outcome
        }
        return fd
    }

    /// Before a single byte is sent: the listener must run as this process's
    /// user or as root (`SO_PEERCRED`, the credentials it had when it called
    /// `listen`). Not checked where the platform has no `SO_PEERCRED`.
    private static func checkListenerOwner(_ fd: Int32) -> Failure? {
        #if os(Linux)
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: Glibc exports it
        // to C only with _GNU_SOURCE, so read it as three 32-bit fields.
        var credentials: [Int32] = [0, 0, 0]
        var size = socklen_t(MemoryLayout<Int32>.size * credentials.count)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else {
            return .system(call: "getsockopt(SO_PEERCRED)", errno: errno)
        }
        let owner = UInt32(bitPattern: credentials[1])
        return Self.acceptsListener(uid: owner, myUID: geteuid()) ? nil : .foreignListener(uid: owner, pid: credentials[0])
        #else
        return nil
        #endif
    }

    /// The rule: the same user as the app, or root.
    static func acceptsListener(uid: UInt32, myUID: UInt32) -> Bool {
        uid == myUID || uid == 0
    }

    private static func connectTCP(host: String, port: Int, timeout: TimeInterval) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(sockStreamType)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .resolve(String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var lastFailure = Failure.resolve("no address for \(host)")
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd: Int32
            do { fd = try makeSocket(family: info.pointee.ai_family) } catch { lastFailure = error; continue }
            if let failure = connectWithTimeout(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, timeout) {
                _ = close(fd)
                lastFailure = failure
                continue
            }
            var noDelay: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        throw lastFailure
    }

    private static func makeSocket(family: Int32) throws(Failure) -> Int32 {
        let fd = socket(family, Int32(sockStreamType), 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    /// A non-blocking connect bounded by `timeout`, leaving the socket
    /// blocking afterwards (only the writer thread ever waits on it).
    private static func connectWithTimeout(
        _ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, _ timeout: TimeInterval
    ) -> Failure? {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        if connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS || errno == EAGAIN else { return .system(call: "connect", errno: errno) }
        var pollDescriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&pollDescriptor, 1, Int32(max(1, timeout * 1000)))
        guard ready > 0 else { return ready == 0 ? .timedOut : .system(call: "poll", errno: errno) }
        var socketError: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &size)
        return socketError == 0 ? nil : .system(call: "connect", errno: socketError)
    }
}

#if canImport(Darwin)
private let sockStreamType = SOCK_STREAM
private func sendNoSignal(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    Darwin.send(fd, pointer, count, 0)
}
#else
private let sockStreamType = Int32(SOCK_STREAM.rawValue)
private func sendNoSignal(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
}
#endif

/// Shuts a socket down from another thread, waking a writer blocked in `send`.
func shutdownSocket(_ descriptor: Int32) {
    _ = shutdown(descriptor, Int32(SHUT_RDWR))
}
