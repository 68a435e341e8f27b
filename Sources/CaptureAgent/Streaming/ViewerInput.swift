import WireProtocol

/// What the writer learns of one connection's viewer from what it sends
/// back: its receipts, kept in a ``DeliveryLedger``, the protocol version it
/// asks for, and control messages, handed on. One per connection; writer
/// thread only.
struct ViewerInput {
    /// Receipts are read at idle checks and every this many events written
    /// (a write carries a batch), so that under steady load they neither
    /// pile up nor go stale.
    static let eventsPerRead = 32

    /// What the viewer has confirmed of what was written to it.
    private(set) var ledger: DeliveryLedger
    /// The protocol version of the frames written on this connection: 1
    /// until the viewer asks for another it reads (bodies then go as raw
    /// bytes), so an older viewer never sees a frame it cannot read.
    private(set) var frameVersion = Wire.protocolVersion
    private var decoder: ViewerMessageDecoder
    private var eventsSinceRead = 0
    /// Where rules and replays go, for an agent that accepts control; nil
    /// for one that does not, which then never decodes them.
    private let control: (@Sendable (ViewerMessage) -> Void)?

    init(seesUnread: Bool, control: (@Sendable (ViewerMessage) -> Void)?) {
        ledger = DeliveryLedger(seesUnread: seesUnread)
        self.control = control
        // Receipts are tiny; rules may carry map-local files.
        decoder = ViewerMessageDecoder(maximumFrameSize: control == nil ? 64 * 1024 : 16 * 1024 * 1024, acceptsRules: control != nil)
    }

    /// Sends frames in one write and counts their flow messages, and the
    /// events each stands for (`messageEvents`, in order), as written on
    /// this connection; reads receipts every few writes. Until the viewer
    /// has sent a receipt, on a Linux Unix socket, also notes the write
    /// among the unread frames with the charge it added.
    mutating func write(_ frame: [UInt8], messageEvents: [Int], on socket: borrowing EventSocket) throws(EventSocket.Failure) {
        let events = messageEvents.reduce(0, +)
        if ledger.tracksUnread {
            let before = socket.unreadCharge()
            try socket.send(frame)
            let after = socket.unreadCharge()
            ledger.unread.wrote(bytes: frame.count, events: events, chargeBefore: before, chargeAfter: after)
        } else {
            try socket.send(frame)
        }
        ledger.wrote(messageEvents: messageEvents)
        eventsSinceRead += max(1, events)
        if eventsSinceRead >= Self.eventsPerRead { _ = read(from: socket) }
    }

    /// Takes in everything the viewer has sent; false once it has closed
    /// (or sent something that is not a stream of its frames).
    mutating func read(from socket: borrowing EventSocket) -> Bool {
        eventsSinceRead = 0
        while true {
            switch socket.receive() {
            case .nothing:
                return true
            case .closed:
                return false
            case .bytes(let bytes):
                decoder.append(contentsOf: bytes)
                do {
                    while let message = try decoder.next() {
                        switch message {
                        case .receipt(let receipt):
                            ledger.receipt(messages: receipt.events)
                        case .useProtocolVersion(let version):
                            if Wire.supportedVersions.contains(version) { frameVersion = version }
                        default:
                            control?(message)
                        }
                    }
                } catch {
                    return false
                }
            }
        }
    }

    /// Notes the kernel's unread charge, sampled at an idle check (it reads
    /// 0 once the peer is gone, so it is sampled before reading).
    mutating func observeUnread(on socket: borrowing EventSocket) {
        if let charge = socket.unreadCharge() { ledger.unread.observe(charge: charge) }
    }
}
