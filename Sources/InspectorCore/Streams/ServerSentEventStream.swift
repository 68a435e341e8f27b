import Foundation
import WireProtocol

/// A part of a body and when it arrived, as the agent timed it.
///
/// ```swift
/// TimedPart(offset: 0, size: 12, at: 0.25)   // the first 12 bytes, 250 ms in
/// ```
package struct TimedPart: Sendable, Equatable {
    /// The true bytes of the body before this part.
    package var offset: Int
    /// The part's true size.
    package var size: Int
    /// Seconds since the flow's start.
    package var at: Double

    package init(offset: Int, size: Int, at: Double) {
        self.offset = offset
        self.size = size
        self.at = at
    }
}

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
    package init(body: CapturedBody, parts: [TimedPart], state: FlowState) {
        var decoder = ServerSentEventDecoder()
        var events: [ServerSentEvent] = []
        let data = body.data
        var read = 0
        for part in parts where part.offset + part.size > read && read < data.count {
            let end = min(part.offset + part.size, data.count)
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
