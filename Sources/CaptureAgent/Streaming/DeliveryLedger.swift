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
    /// Flow messages written on the connection: what receipts count. A
    /// message stands for more than one event when later events of its
    /// flow were folded into it (``PendingQueue``).
    private var messagesWritten = 0
    /// The written messages that stand for more than one event, oldest
    /// first, until a receipt covers them: their ordinal on the connection
    /// and the events they stand for beyond one.
    private var folded = FIFO<(ordinal: Int, extra: Int)>()
    /// The extra events of the folded messages receipts have covered.
    private var acknowledgedExtra = 0
    /// The events the inspector's receipts cover, capped at `written`; nil
    /// until its first receipt.
    private(set) var acknowledged: Int?
    /// Before the first receipt, the frames that may sit unread.
    var unread = UnreadFrames()

    init(seesUnread: Bool) {
        self.seesUnread = seesUnread
    }

    /// Whether frames must be sampled into ``unread`` (no receipt yet, and the kernel can tell).
    var tracksUnread: Bool { seesUnread && acknowledged == nil }

    /// Flow messages were written, each standing for its count of events.
    mutating func wrote(messageEvents: [Int]) {
        for events in messageEvents {
            if events > 1 { folded.append((messagesWritten, events - 1)) }
            messagesWritten += 1
            written += events
        }
    }

    /// A receipt: the flow messages the inspector has taken, cumulative, so
    /// an older or lying one cannot lower the count or claim more than was
    /// written. Turned into events by adding what the folded messages it
    /// covers stand for.
    mutating func receipt(messages: Int) {
        let messages = min(max(messages, 0), messagesWritten)
        while !folded.isEmpty, folded[0].ordinal < messages {
            acknowledgedExtra += folded.removeFirst().extra
        }
        acknowledged = max(acknowledged ?? 0, min(messages + acknowledgedExtra, written))
    }

    /// The events written that the inspector has not confirmed.
    var unconfirmedEvents: Int {
        if let acknowledged { return written - acknowledged }
        return seesUnread ? unread.events : written
    }
}
