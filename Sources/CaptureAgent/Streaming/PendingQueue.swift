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
/// While ``foldsLaterEvents`` is on (the viewer reads protocol version 2),
/// a flow's `flowResponse` and `flowFinished` that arrive while its
/// `flowStarted` still waits here are folded into it: one frame carries the
/// finished flow (docs/PROTOCOL.md §3.3), and the queue entry stands for
/// every event folded in, in the counts of what was written or dropped.
/// A quick flow then costs one frame to encode, send, decode and
/// acknowledge instead of two or three.
///
/// A flow's body parts (`bodyPart`, which the agent makes only for a
/// version-2 viewer) fold the same way into a start still queued; and when
/// a flow's `flowFinished` is queued while some of its parts still wait
/// here, those parts are folded away: the end carries the whole body, and
/// stands for them. A stream's parts go out one by one as they come, and a
/// flow that ends within the writer's pause costs one frame, as before.
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
        /// The message, boxed: the queue's storage, its folds and its
        /// trimming move this reference, never the message (``QueuedMessage``).
        let queued: QueuedMessage
        /// The estimated frame size as submitted.
        var cost: Int
        /// The estimated frame size with its bodies cut to ``keptBodyBytes``.
        var cutCost: Int
        /// The flow events it stands for: 1 (0 for other messages), plus
        /// those folded into it.
        var events: Int
        /// When it was submitted, in monotonic nanoseconds.
        var submittedAt: UInt64
        /// A part folded away into its flow's end: nothing to write, and
        /// nothing to count (the end stands for it).
        var isFoldedAway = false
    }

    /// What an entry holds while its message is moved out: a message with
    /// nothing to retain or release.
    private static let vacated = Message.status(AgentStatus(droppedEvents: 0, queuedEvents: 0))

    /// A message taken for writing, and the flow events it stands for.
    struct Taken {
        var message: Message
        var events: Int
    }

    let limits: EventStreamer.Limits
    private var entries = FIFO<Entry>()
    /// The oldest this many entries go out with their bodies cut. Cutting
    /// goes oldest first, so the cut entries are always a prefix.
    private var cutCount = 0
    /// Flows whose `flowStarted` was queued on the current connection and
    /// whose `flowFinished` has not been taken by the writer yet.
    private var flowsStartedHere = Set<FlowID>()
    /// Whether later events of a flow are folded into its queued start.
    var foldsLaterEvents = false
    /// Queued `flowStarted` entries that later events may still fold into,
    /// by absolute position (``removedCount`` plus the index in ``entries``).
    private var foldable: [FlowID: Int] = [:]
    /// Queued `bodyPart` entries of each flow, by absolute position, oldest
    /// first: what the flow's end folds away.
    private var queuedParts: [FlowID: [Int]] = [:]
    /// Entries taken from the front since the queue was made.
    private var removedCount = 0
    /// Estimated bytes queued now.
    private(set) var bytes = 0
    /// Messages queued with their bodies cut, since the queue was made.
    private(set) var cutMessages = 0
    /// The most entries, and estimated bytes, ever queued at once (each
    /// after the queue gave way), since the queue was made.
    private(set) var peakCount = 0
    private(set) var peakBytes = 0

    init(limits: EventStreamer.Limits) {
        self.limits = limits
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Queues `message` for the current connection, bounded; returns how many
    /// flow events were dropped (it, or older ones) and must be counted.
    /// Moved in, not copied (``EventStreamer/submit(_:)`` says why `__owned`).
    mutating func submit(_ message: __owned Message, at now: UInt64 = 0) -> Int {
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
        case .bodyPart(let event) where !flowsStartedHere.contains(event.id):
            return 1
        default:
            break
        }
        if fold(message) { return settle() }
        let (cost, cutCost) = message.estimatedFrameSizes(keepingBodyBytes: Self.keptBodyBytes)
        var events = message.isFlowEvent ? 1 : 0
        switch message {
        case .bodyPart(let event):
            queuedParts[event.id, default: []].append(removedCount + entries.count)
        case .flowFinished(let event):
            events += foldAwayParts(of: event.id)
        default:
            break
        }
        entries.append(Entry(queued: QueuedMessage(consume message), cost: cost, cutCost: cutCost, events: events, submittedAt: now))
        bytes += cost
        return settle()
    }

    /// Folds away the parts of flow `id` still queued, as its end is queued
    /// behind them; returns the events they stood for, which the end now does.
    private mutating func foldAwayParts(of id: FlowID) -> Int {
        guard let positions = queuedParts.removeValue(forKey: id) else { return 0 }
        var events = 0, freed = 0
        for position in positions {
            let index = position - removedCount
            let isCut = index < cutCount
            entries.update(at: index) { entry in
                events += entry.events
                freed += isCut ? entry.cutCost : entry.cost
                entry.queued.message = Self.vacated
                (entry.cost, entry.cutCost, entry.events, entry.isFoldedAway) = (0, 0, 0, true)
            }
        }
        bytes -= freed
        return events
    }

    /// Gives way (``giveWay()``), then notes the peaks; returns the flow events dropped.
    private mutating func settle() -> Int {
        let dropped = giveWay()
        peakCount = max(peakCount, entries.count)
        peakBytes = max(peakBytes, bytes)
        return dropped
    }

    /// Folds `message` into its flow's queued start when it can; whether it did.
    /// Any other message of the flow queued after the start (a hold, a gRPC
    /// message, a second start) ends folding for it, so the order the viewer
    /// sees is kept.
    private mutating func fold(_ message: Message) -> Bool {
        guard foldsLaterEvents, let id = message.flowID else { return false }
        switch message {
        case .flowResponse:
            guard let position = foldable[id] else { return false }
            return fold(message, at: position - removedCount)
        case .flowFinished:
            guard let position = foldable.removeValue(forKey: id) else { return false }
            return fold(message, at: position - removedCount)
        case .flowStarted(let log):
            foldable[id] = log.state.isFinal ? nil : removedCount + entries.count
            return false
        case .bodyPart:
            guard let position = foldable[id] else { return false }
            return fold(message, at: position - removedCount)
        default:
            // A hold, a release or a gRPC message queued after the start:
            // folding what follows would put it before them.
            foldable[id] = nil
            return false
        }
    }

    private mutating func fold(_ message: Message, at index: Int) -> Bool {
        let isCut = index < cutCount
        var added = 0, newlyCut = 0
        let folded = entries.update(at: index) { entry -> Bool in
            // In place, in the box: the queued flow is changed, not copied and replaced.
            guard entry.queued.message.foldIntoStart(message) else { return false }
            let (cost, cutCost) = entry.queued.message.estimatedFrameSizes(keepingBodyBytes: Self.keptBodyBytes)
            added = isCut ? cutCost - entry.cutCost : cost - entry.cost
            if isCut, entry.cost == entry.cutCost, cost > cutCost { newlyCut = 1 }
            entry.cost = cost
            entry.cutCost = cutCost
            entry.events += 1
            return true
        }
        bytes += added
        cutMessages += newlyCut
        return folded
    }

    /// How long the writer should wait before taking the front entry, in
    /// nanoseconds: while a flow's start that later events may still fold
    /// into is younger than the limits' fold window, it waits for them (and what queued
    /// behind it waits too, in order); 0 when it can go now.
    func holdBeforeNext(now: UInt64) -> UInt64 {
        guard foldsLaterEvents, !entries.isEmpty else { return 0 }
        let front = entries[0]
        guard case .flowStarted = front.queued.message, let id = front.queued.message.flowID, foldable[id] == removedCount else { return 0 }
        let age = now &- front.submittedAt
        let window = limits.foldWindowNanoseconds
        return age >= window ? 0 : window - age
    }

    /// Cuts bodies, then drops whole events, oldest first, until the queue
    /// is within its limits; returns the flow events dropped.
    private mutating func giveWay() -> Int {
        while bytes > limits.maximumBytes, cutCount < entries.count {
            let (cost, cutCost) = (entries[cutCount].cost, entries[cutCount].cutCost)
            bytes -= cost - cutCost
            if cost > cutCost { cutMessages += 1 }
            cutCount += 1
        }
        var dropped = 0
        while entries.count > limits.maximumEvents || (bytes > limits.maximumBytes && entries.count > 1) {
            let (entry, _) = removeFirst()
            dropped += entry.events
            if case .flowStarted = entry.queued.message, let id = entry.queued.message.flowID { flowsStartedHere.remove(id) }
        }
        return dropped
    }

    /// Moves the next message to write, bodies cut if they gave way, onto
    /// the end of `batch`; returns how many flow events were dropped on the
    /// way (those of flows whose start was dropped after they were queued).
    /// `batch` is unchanged when the queue is empty.
    ///
    /// The message is moved, never copied: a copy retains and a destroy
    /// releases every string and array of a flow, and these ran several
    /// times a message.
    mutating func next(into batch: inout [Taken]) -> Int {
        var dropped = 0
        while !entries.isEmpty {
            let (entry, isCut) = removeFirst()
            if entry.isFoldedAway { continue }
            // Moved out of its box: the only move of the message on its way to the writer.
            var message = Self.vacated
            swap(&message, &entry.queued.message)
            if isCut { message = message.cuttingBodies(to: Self.keptBodyBytes) }
            switch message {
            case .flowStarted(let log) where log.state.isFinal:
                // Complete in one event: nothing of it follows.
                flowsStartedHere.remove(log.id)
            case .flowResponse(let event) where !flowsStartedHere.contains(event.id):
                dropped += 1
                continue
            case .bodyPart(let event) where !flowsStartedHere.contains(event.id):
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
            batch.append(Taken(message: message, events: entry.events))
            return dropped
        }
        return dropped
    }

    /// Empties the queue at the end of a connection; returns the flow events
    /// it held, which are dropped. Flows started on that connection end on
    /// no other.
    mutating func removeAll() -> Int {
        var flowEvents = 0
        for index in 0 ..< entries.count { flowEvents += entries[index].events }
        removedCount += entries.count
        entries.removeAll()
        cutCount = 0
        bytes = 0
        flowsStartedHere.removeAll()
        foldable.removeAll()
        queuedParts.removeAll()
        return flowEvents
    }

    private mutating func removeFirst() -> (Entry, isCut: Bool) {
        let entry = entries.removeFirst()
        removedCount += 1
        switch entry.queued.message {
        case .flowStarted:
            if let id = entry.queued.message.flowID, foldable[id] == removedCount - 1 { foldable[id] = nil }
        case .bodyPart:
            // The oldest queued part of its flow, this one.
            if let id = entry.queued.message.flowID, queuedParts[id]?.first == removedCount - 1 {
                queuedParts[id]!.removeFirst()
                if queuedParts[id]!.isEmpty { queuedParts[id] = nil }
            }
        default:
            break
        }
        let isCut = cutCount > 0
        if isCut { cutCount -= 1 }
        bytes -= isCut ? entry.cutCost : entry.cost
        return (entry, isCut)
    }
}

/// A queued message in a box of its own. A flow's start is a large value
/// holding dozens of references: moved through the queue's storage, and
/// copied out and back in to fold each later event into it, it cost more
/// than anything else the queue did (docs/BENCHMARKS.md, "Costs behind the
/// code"). Boxed once as it is queued, it is changed in place and moved
/// once more, to the writer.
final class QueuedMessage {
    var message: Message

    init(_ message: __owned Message) {
        self.message = message
    }
}

extension Message {
    /// Folds a flow's later `event` (its response head, its end, a body
    /// part) into this `flowStarted` in place, without copying the flow;
    /// false, and unchanged, for any other pair.
    mutating func foldIntoStart(_ event: Message) -> Bool {
        switch consume self {
        case .flowStarted(var log):
            var folded = true
            switch event {
            case .flowResponse(let response): log.apply(response)
            case .flowFinished(let finished): log.apply(finished)
            case .bodyPart(let part): log.apply(part)
            default: folded = false
            }
            self = .flowStarted(log)
            return folded
        case let other:
            self = other
            return false
        }
    }
}
