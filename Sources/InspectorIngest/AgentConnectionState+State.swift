import WireProtocol

/// The states of ``AgentConnectionState``, apart so the machine itself
/// reads as its transitions.
extension AgentConnectionState {
    /// The connection's whole life, one case at a time; what a case needs
    /// travels with it, so no combination that cannot happen can be written.
    enum State {
        /// Open, and not a byte yet: if it closes now, it ends with nothing.
        case silent
        /// Open, bytes came, no hello accepted yet.
        case awaitingHello
        /// Open, its hello accepted.
        case serving(Agent, Backlog)
        /// We are closing it for `reason` (the first one given); the socket
        /// has not closed yet. `connection` once its hello was accepted.
        case closing(connection: ConnectionID?, reason: String, Backlog)
        /// The socket has closed: what is held and what is still buffered go
        /// first, then the last event is decided. `reason`: why we closed it,
        /// nil if we did not.
        case closed(Party, reason: String?, Backlog)
        /// The last event is decided (or there was none); only an event the
        /// inbox refused may still be held.
        case finished(Backlog)
    }

    /// Who a closed connection turned out to be, for its last event.
    enum Party: Equatable {
        /// Not a byte: another netinspect checking this one is alive, a port scan.
        case silent
        /// Bytes, but no hello accepted.
        case stranger
        case agent(ConnectionID)
    }

    /// An agent past its hello, while its socket is open.
    struct Agent {
        let id: ConnectionID
        /// Its hello said it accepts control: it gets the rules.
        let acceptsControl: Bool
        /// Its events the UI has taken (the receipt count).
        var taken = 0
        /// The count of the last receipt written; a receipt is due while it
        /// differs from `taken` (one could not be written while the channel
        /// was not writable, an agent that does not read).
        var written: Int?
    }

    /// What delivery keeps back, besides the bytes not yet decoded.
    enum Backlog {
        case none
        /// Refused by the inbox: the connection is parked until ``resume()``.
        /// `readHeld`: NIO asked to read meanwhile.
        case parked(InboxEvent, bytes: Int, readHeld: Bool)
        /// To offer before anything else: resumed, or the accepted hello's `connected`.
        case due(InboxEvent, bytes: Int, readHeld: Bool)
        /// Delivered after a resume; the read NIO asked for while parked
        /// goes out with ``takeHeldRead()``.
        case readHeld
    }
}

extension AgentConnectionState.Backlog {
    var isParked: Bool {
        if case .parked = self { return true }
        return false
    }

    var isEmpty: Bool {
        if case .none = self { return true }
        return false
    }

    /// A read held back while parked is still owed.
    var isReadHeld: Bool {
        switch self {
        case .parked(_, _, let readHeld), .due(_, _, let readHeld): readHeld
        case .readHeld: true
        case .none: false
        }
    }

    /// The event kept back, if any.
    var event: InboxEvent? {
        switch self {
        case .parked(let event, _, _), .due(let event, _, _): event
        case .none, .readHeld: nil
        }
    }
}
