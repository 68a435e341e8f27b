#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import NIOConcurrencyHelpers
import WireProtocol

/// Accepts agent connections on every configured endpoint and posts what they
/// send to an ``Inbox``. All socket I/O runs on one NIO event loop thread;
/// the caller's thread only binds and shuts down.
///
/// - A Unix socket is created with mode 0600. A stale socket file (nobody
///   answers) is replaced; a live one is ``ListenerError/alreadyListening(path:)``.
///   The file is removed by ``shutdown()``.
/// - A connection that breaks the protocol, sends an oversized frame, an
///   unsupported version or a wrong token is closed with the reason in the
///   inbox; the others carry on.
/// - Back-pressure: when the inbox is full (see ``Inbox/Limits``), a
///   connection whose event it refuses stops being read until the UI drains
///   the inbox; its events then arrive in order, none dropped.
///
/// ```swift
/// let inbox = Inbox()
/// let listener = InspectorListener(configuration: ListenerConfiguration(), inbox: inbox)
/// let endpoints = try listener.start()
/// defer { listener.shutdown() }
/// ```
package final class InspectorListener: Sendable {
    private let configuration: ListenerConfiguration
    private let inbox: Inbox
    private let state = NIOLockedValueBox<State>(.idle)  // pthread-based: see Inbox.events

    private enum State {
        case idle
        case starting
        case running(Running)
    }

    private struct Running {
        var group: MultiThreadedEventLoopGroup
        var channels: [any Channel]
        var context: ListenerContext
        /// Socket files we created.
        var socketFiles: [String]
    }

    /// Creates a listener; nothing is bound until ``start()``.
    package init(configuration: ListenerConfiguration, inbox: Inbox) {
        self.configuration = configuration
        self.inbox = inbox
    }

    /// Binds every endpoint and posts ``InboxEvent/listening(_:)`` for each.
    /// Call it from a thread that is not one of NIO's event loops.
    /// - Returns: the bound endpoints, with the real port for `tcp:…:0`.
    /// - Throws: ``ListenerError``; nothing stays bound when it throws.
    package func start() throws(ListenerError) -> [Endpoint] {
        try configuration.validate()
        let wasIdle = state.withLockedValue { state in
            guard case .idle = state else { return false }
            state = .starting
            return true
        }
        guard wasIdle else { throw .alreadyStarted }
        // One loop for every connection: the parked list lives on it.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var running = Running(
            group: group,
            channels: [],
            context: ListenerContext(configuration: configuration, inbox: inbox, eventLoop: group.next()),
            socketFiles: []
        )
        running.context.hookUpToInbox()
        var bound: [Endpoint] = []
        do {
            for endpoint in configuration.endpoints {
                bound.append(try bind(endpoint, into: &running))
            }
        } catch {
            Self.stop(running)
            state.withLockedValue { $0 = .idle }
            throw error
        }
        state.withLockedValue { $0 = .running(running) }
        for endpoint in bound { inbox.post(.listening(endpoint)) }
        return bound
    }

    /// Closes every connection and listening socket and removes the socket
    /// files this listener created. Safe to call more than once; call it from
    /// a thread that is not one of NIO's event loops.
    package func shutdown() {
        let running: Running? = state.withLockedValue { state in
            guard case .running(let running) = state else { return nil }
            state = .idle
            return running
        }
        if let running { Self.stop(running) }
    }

    private static func stop(_ running: Running) {
        running.context.isShuttingDown = true
        // No drain may hand work to the loop once it has shut down.
        running.context.inbox.setSpaceHandler(nil)
        running.context.inbox.setTakenHandler(nil)
        running.context.inbox.setControlHandler(nil)
        running.context.inbox.setRulesHandler(nil)
        running.context.inbox.setServerReplayHandler(nil)
        // Asked while our sockets still listen; see isServedByThisProcess.
        let ours = running.socketFiles.filter(UnixSocketFile.isServedByThisProcess)
        for channel in running.channels { try? channel.close().wait() }
        let context = running.context
        try? context.eventLoop.submit { context.abandonParked() }.wait()
        // Closes the accepted connections too.
        try? running.group.syncShutdownGracefully()
        for path in ours { unlink(path) }
    }

    private func bind(_ endpoint: Endpoint, into running: inout Running) throws(ListenerError) -> Endpoint {
        let bootstrap = Self.bootstrap(running.group, running.context)
        switch endpoint {
        case .unix(let path):
            switch try UnixSocketFile.inspect(path) {
            case .live: throw .alreadyListening(path: path)
            case .notASocket: throw .notASocket(path: path)
            case .stale: unlink(path)
            case .absent: break
            }
            let descriptor = try UnixSocketFile.bindPrivately(path)
            do {
                running.channels.append(try Self.wait(endpoint) { try bootstrap.withBoundSocket(descriptor).wait() })
            } catch {
                unlink(path)
                throw error
            }
            running.socketFiles.append(path)
            return endpoint
        case let .tcp(host, port):
            let channel = try Self.wait(endpoint) { try bootstrap.bind(host: host, port: port).wait() }
            running.channels.append(channel)
            return .tcp(host: host, port: channel.localAddress?.port ?? port)
        }
    }

    private static func wait(_ endpoint: Endpoint, _ bind: () throws -> any Channel) throws(ListenerError) -> any Channel {
        do {
            return try bind()
        } catch {
            throw .bindFailed(endpoint, reason: ConnectionHandler.readable(error))
        }
    }

    private static func bootstrap(_ group: MultiThreadedEventLoopGroup, _ context: ListenerContext) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(shared: context))
                }
            }
    }
}
