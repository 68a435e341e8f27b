import NIOCore
import Synchronization
import WireProtocol

/// What every connection of one listener shares.
final class ListenerContext: Sendable {
    let inbox: Inbox
    let token: String?
    let maximumFrameSize: Int
    let helloTimeout: Duration?
    /// The traffic rules in force as one frame, for agents that accept
    /// control (nil for none); replaced by ``replaceRules(_:)``.
    private let rulesFrame: NIOLoopBoundBox<[UInt8]?>
    /// The server replay in force as frames (none for none); replaced by
    /// ``replaceServerReplay(_:)``.
    private let serverReplayFrames: NIOLoopBoundBox<[[UInt8]]>
    /// The one loop every connection runs on; `parked` belongs to it.
    let eventLoop: any EventLoop
    /// Connections the full inbox refused, in the order they were refused.
    private let parked: NIOLoopBoundBox<[ConnectionHandler]>
    /// Connections past their hello, by identifier, for receipts.
    private let accepted: NIOLoopBoundBox<[ConnectionID: ConnectionHandler]>
    private let lastConnectionNumber = Atomic<UInt64>(0)
    private let shuttingDown = Atomic<Bool>(false)

    init(configuration: ListenerConfiguration, inbox: Inbox, eventLoop: any EventLoop) {
        self.inbox = inbox
        token = configuration.token
        maximumFrameSize = configuration.maximumFrameSize
        helloTimeout = configuration.helloTimeout
        self.eventLoop = eventLoop
        rulesFrame = .makeBoxSendingValue(
            configuration.rules.isEmpty ? nil : Array(ViewerMessage.rules(configuration.rules).frame()), eventLoop: eventLoop)
        serverReplayFrames = .makeBoxSendingValue(configuration.serverReplayFrames, eventLoop: eventLoop)
        parked = .makeBoxSendingValue([], eventLoop: eventLoop)
        accepted = .makeBoxSendingValue([:], eventLoop: eventLoop)
    }

    func nextConnectionID() -> ConnectionID {
        .agent(lastConnectionNumber.add(1, ordering: .relaxed).newValue)
    }

    /// Set before the listener closes its connections, so they say why.
    var isShuttingDown: Bool {
        get { shuttingDown.load(ordering: .acquiring) }
        set { shuttingDown.store(newValue, ordering: .releasing) }
    }

    /// Has the inbox wake this listener when the UI has drained it.
    func hookUpToInbox() {
        inbox.setSpaceHandler { [self] in eventLoop.execute { self.resumeParked() } }
        inbox.setTakenHandler { [self] counts in eventLoop.execute { self.taken(counts) } }
        inbox.setControlHandler { [self] message, connection in
            let frame = Array(message.frame())
            eventLoop.execute { self.accepted.value[connection]?.sendControl(frame) }
        }
        inbox.setRulesHandler { [self] rules in
            let frame = Array(ViewerMessage.rules(rules).frame())
            eventLoop.execute { self.replaceRules(rules.isEmpty ? nil : frame, sending: frame) }
        }
        inbox.setServerReplayHandler { [self] frames in
            eventLoop.execute { self.replaceServerReplay(frames) }
        }
    }

    /// The rules a connection that accepts control gets after its hello; on the event loop.
    var currentRulesFrame: [UInt8]? { rulesFrame.value }

    /// The server replay a connection that accepts control gets after the rules; on the event loop.
    var currentServerReplayFrames: [[UInt8]] { serverReplayFrames.value }

    /// A new server replay (or none: a `stop` frame for agents that have
    /// one), kept and sent like the rules.
    private func replaceServerReplay(_ frames: [[UInt8]]) {
        serverReplayFrames.value = frames
        let sent = frames.isEmpty ? [Array(ViewerMessage.serverReplay(nil).frame())] : frames
        for connection in accepted.value.values where connection.acceptsControl {
            for frame in sent { connection.sendControl(frame) }
        }
    }

    /// New rules: kept for connections still to come, sent to every one
    /// that accepts control now. Both on the loop that runs every
    /// handshake, so each agent gets the new rules exactly once, either
    /// way; an empty list goes out too, as it removes the old rules.
    private func replaceRules(_ kept: [UInt8]?, sending frame: [UInt8]) {
        rulesFrame.value = kept
        for connection in accepted.value.values where connection.acceptsControl {
            connection.sendControl(frame)
        }
    }

    /// A connection passed its hello; on the event loop.
    func register(_ connection: ConnectionHandler, as id: ConnectionID) {
        accepted.value[id] = connection
    }

    /// A connection ended; on the event loop.
    func unregister(_ id: ConnectionID) {
        accepted.value[id] = nil
    }

    /// The UI took `counts` events of each connection: receipts go out.
    private func taken(_ counts: [ConnectionID: Int]) {
        for (id, count) in counts { accepted.value[id]?.taken(count) }
    }

    /// Remembers a connection the inbox refused; on the event loop.
    func park(_ connection: ConnectionHandler) {
        parked.value.append(connection)
    }

    /// Lets every parked connection offer again, oldest first; those the
    /// inbox refuses again park again, behind the others.
    private func resumeParked() {
        let waiting = parked.value
        parked.value = []
        for connection in waiting { connection.resume() }
    }

    /// Ends the parked connections whose sockets have already closed: the
    /// loop is about to stop, so the UI will not drain for them again.
    func abandonParked() {
        let waiting = parked.value
        parked.value = []
        for connection in waiting { connection.abandon() }
    }
}
