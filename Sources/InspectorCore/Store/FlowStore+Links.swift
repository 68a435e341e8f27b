import FlowFilter
import WireProtocol

extension FlowStore {
    /// Names the app an agent connection belongs to (``Session`` does, as
    /// the agent says hello): what `~app` and `~pid` match, and the host a
    /// link between two services' flows needs.
    mutating func setOrigin(_ origin: FlowOrigin, ofAgent agent: Int) {
        origins[agent] = origin
    }

    /// The app a stored flow came from; nil for a file's flows and copies.
    package func origin(of record: Record) -> FlowOrigin? {
        record.agent.flatMap { origins[$0] }
    }

    /// The flow a stored flow nests under: for a call, the inbound flow
    /// that was being handled when the app made it (``NetworkLog/parentID``);
    /// for an inbound flow, the captured call that made it (``FlowLinks``).
    /// Nil when there is none, or it is not stored.
    ///
    /// ```swift
    /// store.parentSequence(of: inventoryRequest)   // the checkout service's call
    /// ```
    func parentSequence(of sequence: Int) -> Int? {
        guard let log = self[sequence]?.log else { return nil }
        // The tree asks this of every row on every batch: most flows are
        // neither a call's child nor linked, and cost no hashing.
        let linked = log.isInbound && log.peer != nil && !links.callerOf.isEmpty ? links.callerOf[log.id] : nil
        guard let id = log.parentID ?? linked, let parent = self.sequence(of: id), parent != sequence else { return nil }
        return parent
    }

    /// The same for a flow, with the app it came from: how `~parent` looks up.
    func parent(of log: NetworkLog) -> (log: NetworkLog, origin: FlowOrigin?)? {
        guard let sequence = sequence(of: log.id), let parent = parentSequence(of: sequence), let record = self[parent] else {
            return nil
        }
        return (record.log, origin(of: record))
    }

    /// Tells the links a flow started or changed; the inbound flows whose
    /// caller changed are changed too (their place in the tree moved).
    mutating func noteLinks(of sequence: Int) -> [Change] {
        guard let record = self[sequence], record.log.localAddress != nil || record.log.peer != nil,
              let host = origin(of: record)?.host else { return [] }
        return links.note(record.log, host: host).compactMap { id in self.sequence(of: id).map { Change.updated($0) } }
    }
}
