import Foundation
import WireProtocol

/// A whole `text/event-stream` body read as events: every block in order,
/// each timed by the part that completed it, and how the stream ended.
///
/// ```swift
/// let stream = ServerSentEventStream(body: body, parts: parts, state: .completed)
/// stream.events.filter(\.isDispatched).count
/// stream.ending    // .clean, or .cutOff("…") when it stopped mid-event
/// ```
package struct ServerSentEventStream: Sendable, Equatable {
    /// How the stream ended, as far as the viewer can tell.
    enum Ending: Sendable, Equatable {
        /// Still arriving.
        case live
        /// The flow completed and its last event was whole.
        case clean
        /// The flow failed or was cancelled, or the body stopped inside an event.
        case cutOff(String)
    }

    /// Every block, dispatched or not, in body order.
    var events: [ServerSentEvent]
    /// How it ended.
    var ending: Ending
    /// Whether the capture limit cut the body, so later events are missing.
    var isTruncated: Bool

    /// Reads `body` in the parts it arrived in (`parts`: the flow's marks,
    /// the request's passed over). Bytes past the last part
    /// are read at `endedAt` (the flow's end) when the body came in parts:
    /// the agent folds the parts still queued when a flow ends into its end
    /// (docs/PROTOCOL.md §3.11), so they went by before it, without marks
    /// of their own. A body that came whole (no parts) is read untimed.
    /// `state` is the flow's: it tells a live stream from an ended one.
    init(body: CapturedBody, parts: [BodyPartMark], state: FlowState, endedAt: Double? = nil) {
        var decoder = ServerSentEventDecoder()
        var read = 0
        let streamed = parts.contains { $0.direction == .response }
        let events = decoder.feed(body.data, from: &read, marks: parts, rest: .read(at: state.isFinal && streamed ? endedAt : nil))
        self.events = events
        isTruncated = body.isTruncated
        ending = switch state {
        case .pending, .responded: .live
        case .failed: .cutOff("the flow failed")
        case .cancelled: .cutOff("the app cancelled it")
        case .completed where body.isTruncated: .clean
        case .completed where decoder.isMidEvent: .cutOff("the body ended inside an event")
        case .completed: .clean
        }
    }

    /// The events a browser would dispatch.
    var dispatched: [ServerSentEvent] { events.filter(\.isDispatched) }
}

extension ServerSentEventDecoder {
    /// What to do with the bytes of a body that no part mark covers.
    enum UnmarkedBytes: Sendable {
        /// Leave them for later: the flow is live, their part may yet come.
        case wait
        /// Read them, timed `at`.
        case read(at: Double?)
    }

    /// Reads `data` (a response body so far) from byte `read` on, each
    /// byte timed by the part that brought it (`marks`: a flow's marks in
    /// arrival order; the request's are passed over), and moves `read` past
    /// what it read; the bytes after the last part as `rest` says. Only the
    /// marks past `read` are looked at, so a stream read as it grows costs
    /// each part once.
    mutating func feed(_ data: Data, from read: inout Int, marks: [BodyPartMark], rest: UnmarkedBytes) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        let start = read
        let unread = marks.reversed().lazy.filter { $0.direction == .response }.prefix { $0.end > start }.reversed()
        for part in unread where read < data.count {
            let end = min(part.end, data.count)
            guard end > read else { continue }
            events += feed(data[data.startIndex + read ..< data.startIndex + end], at: part.at)
            read = end
        }
        if case .read(let at) = rest, read < data.count {
            events += feed(data[(data.startIndex + read)...], at: at)
            read = data.count
        }
        return events
    }
}

extension MediaType {
    /// Whether a `Content-Type` is `text/event-stream`.
    static func isEventStream(_ contentType: String?) -> Bool {
        essence(of: contentType) == "text/event-stream"
    }
}
