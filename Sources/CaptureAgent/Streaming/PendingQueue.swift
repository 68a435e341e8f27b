import WireProtocol

/// The agent's bounded queue of events for the inspector, and every decision
/// about what gives way when the inspector cannot keep up. A value with no
/// lock and no I/O: ``EventStreamer`` holds it under its lock, and tests
/// drive it directly.
///
/// Under pressure, bodies give way before flows. When the queued bytes pass
/// ``EventStreamer/Limits/maximumBytes``, the oldest queued events go out
/// with their bodies cut to ``keptBodyBytes`` (marked truncated, true size
/// kept), so a person watching an upload-heavy app still sees every
/// request. Only when even that is not enough, or more than
/// ``EventStreamer/Limits/maximumEvents`` wait, are whole events dropped,
/// oldest first, and counted.
///
/// A flow's later events go only where its `flowStarted` went: if that was
/// dropped (no inspector, a full queue) or went to an earlier connection,
/// they are dropped and counted too. An inspector that got them would
/// discard them as belonging to no flow it knows, and acknowledge them, so
/// they would be lost without being counted.
struct PendingQueue {
    /// What survives of each body once bodies give way: enough to recognise it.
    static let keptBodyBytes = 4096

    private struct Entry {
        var message: Message
        /// The estimated frame size as submitted.
        var cost: Int
        /// The estimated frame size with its bodies cut to ``keptBodyBytes``.
        var cutCost: Int
    }

    let limits: EventStreamer.Limits
    private var entries = FIFO<Entry>()
    /// The oldest this many entries go out with their bodies cut. Cutting
    /// goes oldest first, so the cut entries are always a prefix.
    private var cutCount = 0
    /// Flows whose `flowStarted` was queued on the current connection and
    /// whose `flowFinished` has not been taken by the writer yet.
    private var flowsStartedHere = Set<FlowID>()
    /// Estimated bytes queued now.
    private(set) var bytes = 0
    /// Messages queued with their bodies cut, since the queue was made.
    private(set) var cutMessages = 0

    init(limits: EventStreamer.Limits) {
        self.limits = limits
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Queues `message` for the current connection, bounded; returns how many
    /// flow events were dropped (it, or older ones) and must be counted.
    mutating func submit(_ message: Message) -> Int {
        switch message {
        case .flowStarted(let log):
            flowsStartedHere.insert(log.id)
        case .flowResponse(let event) where !flowsStartedHere.contains(event.id):
            return 1
        case .flowFinished(let event) where !flowsStartedHere.contains(event.id):
            return 1
        case .held(let hold) where !flowsStartedHere.contains(hold.id):
            return 0
        case .released(let release) where !flowsStartedHere.contains(release.id):
            return 0
        default:
            break
        }
        let (cost, cutCost) = message.estimatedFrameSizes(keepingBodyBytes: Self.keptBodyBytes)
        entries.append(Entry(message: message, cost: cost, cutCost: cutCost))
        bytes += cost
        while bytes > limits.maximumBytes, cutCount < entries.count {
            let entry = entries[cutCount]
            bytes -= entry.cost - entry.cutCost
            if entry.cost > entry.cutCost { cutMessages += 1 }
            cutCount += 1
        }
        var dropped = 0
        while entries.count > limits.maximumEvents || (bytes > limits.maximumBytes && entries.count > 1) {
            let (entry, _) = removeFirst()
            guard entry.message.isFlowEvent else { continue }
            dropped += 1
            if case .flowStarted(let log) = entry.message { flowsStartedHere.remove(log.id) }
        }
        return dropped
    }

    /// The next message to write, bodies cut if they gave way, and how many
    /// flow events were dropped on the way (those of flows whose start was
    /// dropped after they were queued). `nil` when the queue is empty.
    mutating func next() -> (message: Message?, dropped: Int) {
        var dropped = 0
        while !entries.isEmpty {
            let (entry, isCut) = removeFirst()
            let message = isCut ? entry.message.cuttingBodies(to: Self.keptBodyBytes) : entry.message
            switch message {
            case .flowStarted(let log) where log.state.isFinal:
                // Complete in one event: nothing of it follows.
                flowsStartedHere.remove(log.id)
            case .flowResponse(let event) where !flowsStartedHere.contains(event.id):
                dropped += 1
                continue
            case .flowFinished(let event):
                guard flowsStartedHere.remove(event.id) != nil else {
                    dropped += 1
                    continue
                }
            case .held(let hold) where !flowsStartedHere.contains(hold.id):
                continue
            case .released(let release) where !flowsStartedHere.contains(release.id):
                continue
            default:
                break
            }
            return (message, dropped)
        }
        return (nil, dropped)
    }

    /// Empties the queue at the end of a connection; returns the flow events
    /// it held, which are dropped. Flows started on that connection end on
    /// no other.
    mutating func removeAll() -> Int {
        var flowEvents = 0
        for index in 0 ..< entries.count where entries[index].message.isFlowEvent { flowEvents += 1 }
        entries.removeAll()
        cutCount = 0
        bytes = 0
        flowsStartedHere.removeAll()
        return flowEvents
    }

    private mutating func removeFirst() -> (Entry, isCut: Bool) {
        let entry = entries.removeFirst()
        let isCut = cutCount > 0
        if isCut { cutCount -= 1 }
        bytes -= isCut ? entry.cutCost : entry.cost
        return (entry, isCut)
    }
}
