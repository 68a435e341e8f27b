import NIOCore
import NIOPosix
import WireProtocol

/// Accepts agent connections on every configured endpoint and posts what they
/// send to an ``Inbox``. All socket I/O runs on one NIO event loop thread.
///
/// ```swift
/// let inbox = Inbox()
/// let listener = InspectorListener(configuration: ListenerConfiguration(), inbox: inbox)
/// let endpoints = try listener.start()
/// defer { listener.shutdown() }
/// ```
public final class InspectorListener: Sendable {
    private let configuration: ListenerConfiguration
    private let inbox: Inbox

    /// Creates a listener; nothing is bound until ``start()``.
    public init(configuration: ListenerConfiguration, inbox: Inbox) {
        self.configuration = configuration
        self.inbox = inbox
    }

    /// Binds every endpoint and posts ``InboxEvent/listening(_:)`` for each.
    /// - Returns: the bound endpoints, with the real port for `tcp:…:0`.
    /// - Throws: ``ListenerError``; nothing stays bound when it throws.
    public func start() throws(ListenerError) -> [Endpoint] {
        try configuration.validate()
        throw .bindFailed(configuration.endpoints[0], reason: "not implemented yet")
    }

    /// Closes every connection and listening socket and removes the socket
    /// files this listener created. Safe to call more than once.
    public func shutdown() {}
}
