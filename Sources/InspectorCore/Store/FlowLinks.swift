import Foundation
import WireProtocol

/// The links between captured calls and the inbound flows they made, kept
/// up to date as flows start and end, in whatever order two agents' events
/// arrive (``FlowLink`` decides each one). Bounded: past ``limit`` flows,
/// the oldest are forgotten.
///
/// ```swift
/// var links = FlowLinks(limit: 10_000)
/// links.note(call, host: "build-7")
/// links.note(received, host: "build-7")   // [received.id]: its caller changed
/// links.callerOf[received.id]             // call.id
/// ```
package struct FlowLinks: Sendable {
    typealias Entry = (id: FlowID, endpoint: FlowLink.Endpoint)

    /// Entries of one address in arrival order; the first `dropped` are forgotten.
    struct Group: Sendable {
        var entries: [Entry] = []
        var dropped = 0
        var live: ArraySlice<Entry> { entries[dropped...] }
    }

    /// Flows remembered at most.
    let limit: Int
    /// For each inbound flow made by a captured call, that call.
    private(set) var callerOf: [FlowID: FlowID] = [:]
    /// The inbound flows each call made.
    private(set) var calleesOf: [FlowID: [FlowID]] = [:]
    private var calls: [String: Group] = [:]
    private var received: [String: Group] = [:]
    /// Every entry's address and side, oldest first, for forgetting.
    private var order: [(address: String, isCall: Bool)] = []
    private var orderHead = 0

    /// Creates an empty index remembering at most `limit` flows.
    init(limit: Int = 100_000) {
        self.limit = max(1, limit)
    }

    /// Notes a flow as it started or changed (a call's end moves its
    /// span), from an agent on `host`; returns the inbound flows whose
    /// caller changed. Flows that can take no part in a link are ignored.
    @discardableResult
    mutating func note(_ log: NetworkLog, host: String) -> [FlowID] {
        if let call = FlowLink.Endpoint(call: log, host: host) {
            let isNew = upsert((log.id, call), isCall: true)
            // Requests reach one address in the order they were sent: those
            // that started before this call cannot be its.
            var changed: [FlowID] = []
            for entry in (received[call.address]?.live ?? []).reversed() {
                if entry.endpoint.start < call.start { break }
                if relink(entry) { changed.append(entry.id) }
            }
            if isNew { forgetOldest() }
            return changed
        }
        if let inbound = FlowLink.Endpoint(received: log, host: host) {
            let isNew = upsert((log.id, inbound), isCall: false)
            let changed = relink((log.id, inbound))
            if isNew { forgetOldest() }
            return changed ? [log.id] : []
        }
        return []
    }

    /// Forgets every flow.
    mutating func removeAll() {
        self = FlowLinks(limit: limit)
    }

    /// Finds `entry`'s caller again; whether it changed.
    private mutating func relink(_ entry: Entry) -> Bool {
        let caller = calls[entry.endpoint.address].flatMap { FlowLink.caller(of: entry.endpoint, among: $0.live)?.id }
        let before = callerOf[entry.id]
        guard caller != before else { return false }
        if let before { calleesOf[before]?.removeAll { $0 == entry.id } }
        callerOf[entry.id] = caller
        if let caller { calleesOf[caller, default: []].append(entry.id) }
        return true
    }

    /// Adds an entry, or replaces the one with its id; whether it is new.
    private mutating func upsert(_ entry: Entry, isCall: Bool) -> Bool {
        let address = entry.endpoint.address
        var group = take(address, isCall: isCall) ?? Group()
        defer { if isCall { calls[address] = group } else { received[address] = group } }
        if let index = group.live.lastIndex(where: { $0.id == entry.id }) {
            group.entries[index] = entry
            return false
        }
        group.entries.append(entry)
        order.append((address, isCall))
        return true
    }

    /// Removes and returns one address's group, to change it without
    /// holding on to `self` meanwhile.
    private mutating func take(_ address: String, isCall: Bool) -> Group? {
        isCall ? calls.removeValue(forKey: address) : received.removeValue(forKey: address)
    }

    private mutating func forgetOldest() {
        guard order.count - orderHead > limit else { return }
        let (address, isCall) = order[orderHead]
        orderHead += 1
        if orderHead > limit {
            order.removeFirst(orderHead)
            orderHead = 0
        }
        guard var group = take(address, isCall: isCall), group.dropped < group.entries.count else {
            return
        }
        let id = group.entries[group.dropped].id
        group.dropped += 1
        if let caller = callerOf.removeValue(forKey: id) { calleesOf[caller]?.removeAll { $0 == id } }
        calleesOf[id] = nil
        if group.dropped * 2 > group.entries.count {
            group.entries.removeFirst(group.dropped)
            group.dropped = 0
        }
        guard !group.entries.isEmpty else { return }
        if isCall { calls[address] = group } else { received[address] = group }
    }
}
