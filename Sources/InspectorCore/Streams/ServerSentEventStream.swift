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
    package enum Ending: Sendable, Equatable {
        /// Still arriving.
        case live
        /// The flow completed and its last event was whole.
        case clean
        /// The flow failed or was cancelled, or the body stopped inside an event.
        case cutOff(String)
    }

    /// Every block, dispatched or not, in body order.
    package var events: [ServerSentEvent]
    /// How it ended.
    package var ending: Ending
    /// Whether the capture limit cut the body, so later events are missing.
    package var isTruncated: Bool

    /// Reads `body` in the parts it arrived in (bytes past the last part,
    /// or all of them when the flow has no parts, are read untimed).
    /// `state` is the flow's: it tells a live stream from an ended one.
    package init(body: CapturedBody, parts: [BodyPartMark], state: FlowState) {
        var decoder = ServerSentEventDecoder()
        var events: [ServerSentEvent] = []
        let data = body.data
        var read = 0
        for part in parts where part.end > read && read < data.count {
            let end = min(part.end, data.count)
            events += decoder.feed(data[data.startIndex + read ..< data.startIndex + end], at: part.at)
            read = end
        }
        if read < data.count { events += decoder.feed(data[(data.startIndex + read)...], at: nil) }
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
    package var dispatched: [ServerSentEvent] { events.filter(\.isDispatched) }
}

extension MediaType {
    /// Whether a `Content-Type` is `text/event-stream`.
    package static func isEventStream(_ contentType: String?) -> Bool {
        essence(of: contentType) == "text/event-stream"
    }
}
