import InspectorIngest
import WireProtocol

/// The recently seen spans' parents, to find the inbound flow a client span
/// was made under when spans sit between them (a handler span, a database
/// span), whatever order the spans arrive in.
///
/// A flow whose chain meets a span not seen yet is taken to hang directly
/// under an inbound flow with that id (the common shape; flow ids derive
/// from trace and span ids, so the link holds when that flow arrives) and
/// waits: when the missing span arrives and turns out to be something
/// else, ``remember(_:isInboundFlow:)`` hands the flow back with its parent
/// corrected, to be posted again (the store replaces it in place).
///
/// Bounded: the oldest spans are forgotten once ``capacity`` are held, and
/// at most ``capacity`` flows wait; past that a flow keeps its first guess.
struct SpanAncestry {
    private struct Entry {
        var parent: FlowID?
        var isInboundFlow: Bool
    }

    /// A posted flow whose parent link rests on a guess.
    struct WaitingFlow {
        var connection: ConnectionID
        var log: NetworkLog
    }

    let capacity: Int
    private var entries: [FlowID: Entry] = [:]
    private var order: [FlowID] = []
    private var oldest = 0
    private var waiting: [FlowID: [WaitingFlow]] = [:]
    private var waitingCount = 0

    init(capacity: Int) {
        precondition(capacity > 0, "the span ancestry needs room for at least one span")
        self.capacity = capacity
    }

    /// Remembers a span's parent and whether it is itself an inbound flow.
    /// - Returns: the flows that waited on this span, to be resolved again
    ///   with ``parent(of:traceID:parentSpanID:)`` once the whole batch is remembered.
    mutating func remember(_ span: OTLPSpan, isInboundFlow: Bool) -> [WaitingFlow] {
        let id = SpanFlow.flowID(trace: span.traceID, span: span.spanID)
        let parent = span.parentSpanID.isEmpty ? nil : SpanFlow.flowID(trace: span.traceID, span: span.parentSpanID)
        if entries.updateValue(Entry(parent: parent, isInboundFlow: isInboundFlow), forKey: id) == nil {
            if order.count < capacity {
                order.append(id)
            } else {
                entries[order[oldest]] = nil
                order[oldest] = id
                oldest = (oldest + 1) % capacity
            }
        }
        guard !isInboundFlow, let released = waiting.removeValue(forKey: id) else {
            // An inbound flow is what the waiting flows guessed: they are right.
            if let settled = waiting.removeValue(forKey: id) { waitingCount -= settled.count }
            return []
        }
        waitingCount -= released.count
        return released
    }

    /// The inbound flow that `flow` was made under, starting the walk at the
    /// span `startingAt`; a flow that meets an unknown span waits on it.
    mutating func resolveParent(of flow: WaitingFlow, startingAt start: FlowID) -> FlowID? {
        var current = start
        // Bounded walk: a cycle in hostile input must not loop.
        for _ in 0..<64 {
            guard let entry = entries[current] else {
                if waitingCount < capacity {
                    var guessed = flow
                    guessed.log.parentID = current
                    waiting[current, default: []].append(guessed)
                    waitingCount += 1
                }
                return current
            }
            if entry.isInboundFlow { return current }
            guard let parent = entry.parent else { return nil }
            current = parent
        }
        return nil
    }
}
