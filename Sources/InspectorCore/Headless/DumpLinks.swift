import InspectorIngest
import WireProtocol

/// For `--dump`: which captured call made each inbound flow (``FlowLinks``),
/// and how a line shows it. A line is written once, when its flow ends,
/// and two agents' events arrive in any order, so the mark goes on the
/// line written second, naming the first by the 8 characters of its id
/// (which every inbound flow's line, and every call's that recorded its
/// local address, shows after `#`):
///
/// - the callee's inbound line ends with `↑` and the call's id when the
///   call was known by then (its start, or the whole call, had arrived);
/// - otherwise the call's line ends with `↓` and the callee's id.
///
/// ```swift
/// var links = DumpLinks()
/// for event in inbox.drain() {
///     links.note(event)
///     for finished in assembler.apply(event) { print(DumpFormat.line(finished.log, in: .gmt, link: links.mark(finished))) }
/// }
/// ```
package struct DumpLinks: Sendable {
    private var links: FlowLinks
    private var hosts: [ConnectionID: String] = [:]
    /// Inbound flows already written, and whether their line named the call.
    private var written: [FlowID: Bool] = [:]

    /// Creates an empty index remembering at most `limit` flows.
    package init(limit: Int = 10_000) {
        links = FlowLinks(limit: limit)
    }

    /// Takes in a listener event: who is connected, and each flow as it starts.
    package mutating func note(_ event: InboxEvent) {
        switch event {
        case let .connected(connection, hello, _): hosts[connection] = hello.hostName
        case let .message(connection, .flowStarted(log)):
            if let host = hosts[connection] { links.note(log, host: host) }
        case .message, .disconnected, .listening, .rejected: break
        }
    }

    /// The mark for a finished flow's line, about to be written.
    package mutating func mark(_ finished: FlowAssembler.Finished) -> DumpFormat.Link? {
        let log = finished.log
        if let host = finished.agent?.hostName { links.note(log, host: host) }
        if written.count > links.limit { written.removeAll() }
        if log.isInbound {
            let caller = links.callerOf[log.id]
            written[log.id] = caller != nil
            return caller.map(DumpFormat.Link.madeBy)
        }
        let unnamed = (links.calleesOf[log.id] ?? []).first { written[$0] == false }
        return unnamed.map(DumpFormat.Link.answeredBy)
    }
}
