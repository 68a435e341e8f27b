/// What one connection's inspector has confirmed: the events written on
/// the connection, the inspector's cumulative ``Receipt`` count, and on a
/// Linux Unix socket the frames it may not have read (``UnreadFrames``).
/// Writer thread only.
///
/// When the inspector goes away, ``unconfirmedEvents`` is what goes into
/// the drop count. An inspector that never sent a receipt has confirmed
/// nothing: over TCP, where the kernel does not say what the peer left
/// unread, every event written on such a connection counts. That is the
/// case of a connection that lands in the backlog of an inspector being
/// killed (it is reset before anyone accepts it; pinned by
/// `StreamingTests.testEventsWrittenToAConnectionNobodyAcceptedAreCountedOverTCP`),
/// and of an inspector older than receipts, for which the count is an
/// upper bound.
struct DeliveryLedger {
    /// Whether the kernel shows this socket's unread frames (``EventSocket/seesUnread``).
    let seesUnread: Bool
    /// Flow events written on the connection.
    private(set) var written = 0
    /// The inspector's count, capped at `written`; nil until its first receipt.
    private(set) var acknowledged: Int?
    /// Before the first receipt, the frames that may sit unread.
    var unread = UnreadFrames()

    init(seesUnread: Bool) {
        self.seesUnread = seesUnread
    }

    /// Whether frames must be sampled into ``unread`` (no receipt yet, and the kernel can tell).
    var tracksUnread: Bool { seesUnread && acknowledged == nil }

    mutating func wrote(events: Int) {
        written += events
    }

    /// A receipt: cumulative, so an older or lying one cannot lower the count
    /// or claim more than was written.
    mutating func receipt(events: Int) {
        acknowledged = max(acknowledged ?? 0, min(events, written))
    }

    /// The events written that the inspector has not confirmed.
    var unconfirmedEvents: Int {
        if let acknowledged { return written - acknowledged }
        return seesUnread ? unread.events : written
    }
}
