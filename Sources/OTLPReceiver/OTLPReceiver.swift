import InspectorIngest
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import WireProtocol

/// Receives OpenTelemetry traces over OTLP/HTTP (`POST /v1/traces`,
/// protobuf or JSON, gzip or deflate) and posts their HTTP spans as flows to
/// the same ``Inbox`` the agents' listener fills (see ``SpanIngest``).
///
/// ```swift
/// let receiver = OTLPReceiver(configuration: OTLPReceiverConfiguration(addresses: [("127.0.0.1", 4318)]), inbox: inbox)
/// let bound = try receiver.start()
/// defer { receiver.shutdown() }
/// ```
package final class OTLPReceiver: Sendable {
    private let configuration: OTLPReceiverConfiguration
    private let inbox: Inbox
    /// The ingest every connection shares; its statistics count what came in.
    package let ingest: SpanIngest
    private let running = NIOLockedValueBox<(group: MultiThreadedEventLoopGroup, channels: [any Channel])?>(nil)

    /// Creates a receiver; nothing is bound until ``start()``.
    package init(configuration: OTLPReceiverConfiguration, inbox: Inbox) {
        self.configuration = configuration
        self.inbox = inbox
        ingest = SpanIngest(inbox: inbox)
    }

    /// Binds every endpoint and posts ``InboxEvent/listening(_:)`` for each.
    /// - Returns: the bound endpoints, with the real port for port 0.
    /// - Throws: ``ListenerError``, or ``TLSFilesError`` when the TLS files
    ///   cannot be used; nothing stays bound when it throws.
    package func start() throws -> [Endpoint] {
        try configuration.validate()
        let tlsContext = try configuration.tls.map(TLSContext.init(files:))
        guard running.withLockedValue({ $0 == nil }) else { throw ListenerError.alreadyStarted }
        // Decoding runs on the loops: up to four decode side by side.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: min(4, System.coreCount))
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [ingest, configuration] channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tlsContext { try pipeline.addHandler(TLSServerHandler(context: tlsContext)) }
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(NIOHTTPRequestDecompressor(limit: .size(configuration.maximumBodySize)))
                    try pipeline.addHandler(OTLPRequestHandler(ingest: ingest, configuration: configuration))
                }
            }
        var channels: [any Channel] = []
        var bound: [Endpoint] = []
        for endpoint in configuration.endpoints {
            guard case let .tcp(host, port) = endpoint else { continue }
            do {
                let channel = try bootstrap.bind(host: host, port: port).wait()
                channels.append(channel)
                bound.append(.tcp(host: host, port: channel.localAddress?.port ?? port))
            } catch {
                for channel in channels { try? channel.close().wait() }
                try? group.syncShutdownGracefully()
                throw ListenerError.bindFailed(endpoint, reason: "\(error)")
            }
        }
        running.withLockedValue { $0 = (group, channels) }
        for endpoint in bound { inbox.post(.listening(endpoint)) }
        return bound
    }

    /// Closes every connection and listening socket. Safe to call more than
    /// once; call it from a thread that is not one of NIO's event loops.
    package func shutdown() {
        guard let (group, channels) = running.withLockedValue({ running in defer { running = nil }; return running }) else { return }
        for channel in channels { try? channel.close().wait() }
        try? group.syncShutdownGracefully()
    }
}

/// The TLS certificate or key could not be read or do not match.
package struct TLSFilesError: Error, Sendable, CustomStringConvertible {
    /// Which files and why, for a person.
    package var description: String
}
