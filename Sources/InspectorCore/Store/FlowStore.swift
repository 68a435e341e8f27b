import FlowFilter
import Foundation
import WireProtocol

/// Every flow the inspector has seen, in arrival order, bounded in count and
/// in body memory.
///
/// Each flow gets a *sequence number* when it arrives; numbers only grow, so
/// they order flows by arrival and stay valid while older flows are evicted.
/// Lookups by sequence number and by ``FlowID`` are O(1); eviction of the
/// oldest flow is amortised O(1).
///
/// ```swift
/// var store = FlowStore(limits: .init(maximumFlows: 10_000))
/// let changes = store.insert(log)
/// store.apply(finished)            // updates the flow in place
/// ```
package struct FlowStore: Sendable {
    /// How much the store may hold.
    package struct Limits: Sendable, Equatable {
        /// Flows kept; the oldest are evicted beyond this.
        var maximumFlows: Int
        /// Bytes of captured bodies kept; the oldest flows lose their bodies
        /// (marked as dropped) beyond this.
        var bodyMemoryBudget: Int

        /// Creates limits. Defaults: 100,000 flows and 256 MiB of bodies.
        package init(maximumFlows: Int = 100_000, bodyMemoryBudget: Int = 256 * 1024 * 1024) {
            self.maximumFlows = max(1, maximumFlows)
            self.bodyMemoryBudget = max(0, bodyMemoryBudget)
        }
    }

    /// One stored flow and what the store knows about it.
    package struct Record: Sendable, Equatable {
        /// The flow as last updated.
        package internal(set) var log: NetworkLog
        /// Arrival order number.
        let sequence: Int
        /// Number of the agent connection it came from (see ``Session``), if known.
        let agent: Int?
        /// The URL's host, lowercased, computed once for sorting and display.
        let host: String
        /// The port the URL names, read with the host; nil when it names none.
        let port: Int?
        /// Whether the bodies were dropped to stay within the memory budget.
        var bodiesDropped: Bool
        /// Counts the changes to this record, so derived views can be cached.
        var revision = 0
        /// The mark and comment the person added (viewer-side, not from the agent).
        var annotation = FlowAnnotation()
        /// Set while the flow's agent holds it at a breakpoint.
        var hold: FlowHold?
        /// Deleted by the person (`d`): kept in its slot, so sequence numbers
        /// stay indices, but out of every view, count and file.
        package internal(set) var isDeleted = false
        /// How long the flow was held, as the inspector saw `held` and
        /// `released` arrive (the agent sends no hold times of its own).
        var heldTime = HeldTime()

        var bodyBytes: Int {
            (log.request.body?.data.count ?? 0) + (log.response?.body?.data.count ?? 0)
                + (log.grpc?.messages.reduce(0) { $0 + $1.body.data.count } ?? 0)
        }

        /// The same record, not held (to draw a held response as it arrived).
        var withoutHold: Record {
            var copy = self
            copy.hold = nil
            return copy
        }
    }

    /// What a mutation did, so views can update incrementally.
    package enum Change: Sendable, Equatable {
        /// A flow was added.
        case inserted(Int)
        /// A flow's content changed.
        case updated(Int)
        /// The flows with sequence numbers below this one were evicted.
        case evicted(below: Int)
        /// Everything was removed.
        case cleared
    }

    /// The limits in force.
    let limits: Limits
    private var records: [Record] = []
    /// Index in `records` of the oldest live flow; the slots before it are
    /// evicted and compacted away in batches.
    private var head = 0
    /// Sequence number of `records[0]`.
    private var baseSequence = 0
    private var nextSequence = 0
    private var sequences: [FlowID: Int] = [:]
    /// The oldest flow whose bodies have not been dropped yet.
    private var bodyCursor = 0

    /// Events that named a flow the store does not have (evicted, cleared,
    /// or never started); they are ignored.
    private(set) var unknownFlowEvents = 0
    /// Flows evicted because of ``Limits/maximumFlows``.
    private(set) var evictedFlows = 0
    /// Bytes of bodies currently held.
    private(set) var bodyBytes = 0
    /// Which captured call made each inbound flow (FlowStore+Links.swift).
    var links: FlowLinks
    /// The app each agent connection belongs to, by agent number.
    var origins: [Int: FlowOrigin] = [:]

    /// Creates an empty store.
    init(limits: Limits = Limits()) {
        self.limits = limits
        links = FlowLinks(limit: limits.maximumFlows)
    }

    /// Number of flows held, not counting those deleted.
    var count: Int { records.count - head - deletedCount }
    /// Flows deleted (``delete(_:)``) and not yet evicted.
    private var deletedCount = 0
    /// Whether the store is empty.
    var isEmpty: Bool { count == 0 }
    /// Sequence number of the oldest flow held (or of the next one, when empty).
    var firstSequence: Int { baseSequence + head }
    /// Sequence number the next flow will get.
    var endSequence: Int { nextSequence }
    /// Sequence numbers of all flows held, oldest first.
    var sequenceRange: Range<Int> { firstSequence..<endSequence }

    /// The flow with a sequence number, if still held.
    subscript(sequence: Int) -> Record? {
        guard sequenceRange.contains(sequence) else { return nil }
        return records[sequence - baseSequence]
    }

    /// The flow's record; the sequence number must be in ``sequenceRange``.
    func record(at sequence: Int) -> Record {
        records[sequence - baseSequence]
    }

    /// A flow's sort key, read in place (`record(at:)` copies the whole
    /// record); the sequence number must be in ``sequenceRange``.
    func sortValue(at sequence: Int, key: SortKey) -> SortValue {
        SortValue(records[sequence - baseSequence], key: key)
    }

    /// The sequence number of a flow, if held.
    func sequence(of id: FlowID) -> Int? { sequences[id] }

    /// All records, oldest first.
    package var allRecords: ArraySlice<Record> { records[head...] }

    /// Adds a started flow. A second `flowStarted` for a known id replaces
    /// the flow's content in place.
    mutating func insert(_ log: NetworkLog, agent: Int? = nil) -> [Change] {
        if let existing = sequences[log.id] {
            return update(existing) { $0 = log } + noteLinks(of: existing)
        }
        let sequence = nextSequence
        nextSequence += 1
        let authority = URLAuthority(url: log.request.url)
        let record = Record(log: log, sequence: sequence, agent: agent, host: authority.host.lowercased(), port: authority.port,
                            bodiesDropped: false)
        records.append(record)
        sequences[log.id] = sequence
        bodyBytes += record.bodyBytes
        var changes: [Change] = [.inserted(sequence)]
        if records.count - head > limits.maximumFlows {
            evict(count: records.count - head - limits.maximumFlows)
            changes.append(.evicted(below: firstSequence))
        }
        enforceBodyBudget()
        return changes + noteLinks(of: sequence)
    }

    /// Changes the mark or comment of a flow. Nothing happens (and no change
    /// is reported) when the flow is gone or the annotation stays the same.
    mutating func annotate(_ sequence: Int, _ body: (inout FlowAnnotation) -> Void) -> [Change] {
        guard sequenceRange.contains(sequence) else { return [] }
        let index = sequence - baseSequence
        var annotation = records[index].annotation
        body(&annotation)
        guard annotation != records[index].annotation else { return [] }
        records[index].annotation = annotation
        records[index].revision += 1
        return [.updated(sequence)]
    }

    /// Notes that the agent holds flow `hold.id` at a breakpoint, or (nil)
    /// that flow `id` goes on, at `date` as the inspector saw it. Unknown
    /// flows are ignored.
    mutating func setHold(_ hold: FlowHold?, of id: FlowID, at date: Date) -> [Change] {
        guard let sequence = sequences[id], sequenceRange.contains(sequence) else { return [] }
        let index = sequence - baseSequence
        guard records[index].hold != hold else { return [] }
        if let hold, records[index].hold == nil {
            records[index].heldTime.since = (date, hold.phase)
        } else if hold == nil, let (since, phase) = records[index].heldTime.since {
            records[index].heldTime.add(max(0, date.timeIntervalSince(since)), in: phase)
            records[index].heldTime.since = nil
        }
        records[index].hold = hold
        if hold == nil { heldIDs.remove(id) } else { heldIDs.insert(id) }
        records[index].revision += 1
        return [.updated(sequence)]
    }

    /// Sequence numbers of the held flows, oldest first (of `agent` only, when given).
    func heldSequences(agent: Int? = nil) -> [Int] {
        heldIDs.compactMap { id in
            guard let sequence = sequences[id], let record = self[sequence], record.hold != nil, agent == nil || record.agent == agent else { return nil }
            return sequence
        }.sorted()
    }

    /// The flows held now (a few at most, so the status bar counts them cheaply).
    private var heldIDs: Set<FlowID> = []

    /// Sequence numbers of the marked flows, oldest first.
    var markedSequences: [Int] {
        allRecords.lazy.filter { $0.annotation.isMarked && !$0.isDeleted }.map(\.sequence)
    }

    /// The annotations of every annotated flow, by flow id (for files).
    package var annotations: [FlowID: FlowAnnotation] {
        var result: [FlowID: FlowAnnotation] = [:]
        for record in allRecords where !record.annotation.isEmpty && !record.isDeleted { result[record.log.id] = record.annotation }
        return result
    }

    /// Folds a response head into its flow; unknown flows are counted.
    mutating func apply(_ event: FlowResponse) -> [Change] {
        guard let sequence = sequences[event.id] else { unknownFlowEvents += 1; return [] }
        return update(sequence) { $0.apply(event) }
    }

    /// Appends a gRPC message to its call; unknown flows are counted.
    mutating func apply(_ event: GRPCMessageEvent) -> [Change] {
        guard let sequence = sequences[event.id] else { unknownFlowEvents += 1; return [] }
        return update(sequence) { $0.apply(event) }
    }

    /// Adds a body part to its flow (the body grows); unknown flows are counted.
    mutating func apply(_ event: BodyPartEvent) -> [Change] {
        guard let sequence = sequences[event.id] else { unknownFlowEvents += 1; return [] }
        return update(sequence) { $0.apply(event) }
    }

    /// Appends a WebSocket message to its connection; unknown flows are counted.
    mutating func apply(_ event: WebSocketMessageEvent) -> [Change] {
        guard let sequence = sequences[event.id] else { unknownFlowEvents += 1; return [] }
        return update(sequence) { $0.apply(event) }
    }

    /// Folds a finish event into its flow; unknown flows are counted.
    mutating func apply(_ event: FlowFinished) -> [Change] {
        guard let sequence = sequences[event.id] else { unknownFlowEvents += 1; return [] }
        return update(sequence) { $0.apply(event) } + noteLinks(of: sequence)
    }

    /// Deletes a flow (`d`): it leaves every view and file, its bodies are
    /// freed, and later events for it are ignored as for an evicted flow.
    mutating func delete(_ sequence: Int) -> [Change] {
        guard sequenceRange.contains(sequence), !records[sequence - baseSequence].isDeleted else { return [] }
        let index = sequence - baseSequence
        let id = records[index].log.id
        bodyBytes -= records[index].bodyBytes
        records[index].log.dropBodyData()
        records[index].isDeleted = true
        records[index].hold = nil
        records[index].revision += 1
        sequences[id] = nil
        heldIDs.remove(id)
        deletedCount += 1
        return [.updated(sequence)]
    }

    /// Adds a copy of a flow under a new id, as the newest flow (`D`); it
    /// belongs to no agent, so only netinspect itself can replay it.
    mutating func duplicate(_ sequence: Int) -> [Change] {
        guard let record = self[sequence], !record.isDeleted else { return [] }
        var copy = record.log
        copy.id = FlowID()
        return insert(copy)
    }

    /// Removes every flow. Counters of evictions and unknown events are kept.
    mutating func removeAll() -> [Change] {
        deletedCount = 0
        records.removeAll()
        sequences.removeAll()
        heldIDs.removeAll()
        links.removeAll()
        head = 0
        baseSequence = nextSequence
        bodyCursor = nextSequence
        bodyBytes = 0
        return [.cleared]
    }

    private mutating func update(_ sequence: Int, _ body: (inout NetworkLog) -> Void) -> [Change] {
        let index = sequence - baseSequence
        let before = records[index].bodyBytes
        body(&records[index].log)
        records[index].revision += 1
        bodyBytes += records[index].bodyBytes - before
        // The budget cursor already passed this flow: it is older than flows
        // whose bodies were dropped, so its new bodies go first.
        if sequence < bodyCursor, records[index].bodyBytes > 0 {
            dropBodies(at: index)
        }
        enforceBodyBudget()
        return [.updated(sequence)]
    }

    private mutating func evict(count evictions: Int) {
        var deleted = 0
        for index in head..<(head + evictions) {
            sequences[records[index].log.id] = nil
            bodyBytes -= records[index].bodyBytes
            if records[index].isDeleted { deleted += 1 }
        }
        head += evictions
        deletedCount -= deleted
        evictedFlows += evictions - deleted
        bodyCursor = max(bodyCursor, firstSequence)
        if head > 1024, head * 2 > records.count {
            records.removeFirst(head)
            baseSequence += head
            head = 0
        }
    }

    private mutating func enforceBodyBudget() {
        while bodyBytes > limits.bodyMemoryBudget, bodyCursor < nextSequence {
            dropBodies(at: bodyCursor - baseSequence)
            bodyCursor += 1
        }
    }

    private mutating func dropBodies(at index: Int) {
        guard records[index].bodyBytes > 0 else { return }
        bodyBytes -= records[index].bodyBytes
        records[index].log.dropBodyData()
        records[index].bodiesDropped = true
        records[index].revision += 1
    }
}

extension CapturedBody {
    /// Forgets the bytes, keeping the full size; the body reads as truncated
    /// to nothing.
    mutating func dropData() {
        data = Data()
        isTruncated = true
    }
}

extension NetworkLog {
    /// Forgets every captured byte (both bodies and each gRPC message),
    /// keeping their sizes.
    mutating func dropBodyData() {
        request.body?.dropData()
        response?.body?.dropData()
        if grpc != nil {
            for index in grpc!.messages.indices { grpc!.messages[index].body.dropData() }
        }
    }
}

/// The time a flow spent held at breakpoints, by phase.
///
/// ```swift
/// let held = store[sequence]?.heldTime.request   // seconds before the request went out
/// ```
struct HeldTime: Sendable, Equatable {
    /// Seconds held before the request went out.
    var request: Double = 0
    /// Seconds held after the response arrived, before the app saw it.
    var response: Double = 0
    /// When the current hold began, and at which phase.
    var since: (date: Date, phase: HoldPhase)?

    mutating func add(_ seconds: Double, in phase: HoldPhase) {
        switch phase {
        case .request: request += seconds
        case .response: response += seconds
        }
    }

    package static func == (lhs: HeldTime, rhs: HeldTime) -> Bool {
        lhs.request == rhs.request && lhs.response == rhs.response
            && lhs.since?.date == rhs.since?.date && lhs.since?.phase == rhs.since?.phase
    }
}
