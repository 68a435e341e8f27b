import Foundation
import InspectorIngest
import WireProtocol

/// `--messages` with `--dump` or `--json`: each server-sent event and
/// WebSocket message as it arrives, not only the flow when it finishes.
/// An event stream is read from the flow as each of its events leaves it
/// (the start, which may carry the response and its first parts folded
/// in; the response; each part; the end), from the first byte not read
/// yet, each byte timed by the part that brought it: the same body the
/// assembler holds, so an event is printed once whichever frame brought
/// it. The bytes that came with the end (parts the agent folded into it,
/// or a whole body from a version-1 agent) are read then.
///
/// ```swift
/// var tap = MessageTap()
/// for event in inbox.drain() {
///     for message in tap.apply(event, flowSoFar: assembler.inProgress) { print(message.dumpLine(in: .gmt)) }
///     _ = assembler.apply(event)
/// }
/// ```
package struct MessageTap: Sendable {
    /// One message of one flow.
    package struct Arrival: Sendable {
        /// The flow, as known when the message came.
        package var flow: NetworkLog
        /// The message.
        var item: FlowMessages.Item
    }

    /// An event stream being read: its decoder, and the body bytes fed to it.
    private struct Reading: Sendable {
        var decoder = ServerSentEventDecoder()
        var read = 0
    }

    private var readings: [FlowID: Reading] = [:]

    package init() {}

    /// The messages `event` brings. Call it before the assembler applies
    /// the event: `flowSoFar` gives an in-progress flow as known until now.
    package mutating func apply(_ event: InboxEvent, flowSoFar: (FlowID) -> NetworkLog?) -> [Arrival] {
        guard case .message(_, let message) = event else { return [] }
        switch message {
        case .flowStarted(let log):
            return read(log)
        case .flowResponse(let response):
            guard var flow = flowSoFar(response.id) else { return [] }
            flow.apply(response)
            return read(flow)
        case .bodyPart(let event):
            guard event.part.direction == .response, let flow = flowSoFar(event.id), FlowMessages.isEventStream(flow) else { return [] }
            return read(event.part, of: flow)
        case .webSocketMessage(let event):
            guard let flow = flowSoFar(event.id) else { return [] }
            let message = event.message
            return [Arrival(flow: flow, item: FlowMessages.Item(
                detail: .webSocket(message.opcode, closeCode: message.closeCode), direction: message.direction, at: message.at,
                size: message.body.size, data: message.body.data, isTruncated: message.body.isTruncated))]
        case .flowFinished(let finished):
            guard var flow = flowSoFar(finished.id) else { return [] }
            flow.apply(finished)
            return read(flow)
        default:
            return []
        }
    }

    /// The events of `flow`'s event stream completed by the bytes not read
    /// yet. Those past the last part are left for a later part while the
    /// flow is live, and read at the end (``ServerSentEventStream``'s rule
    /// for their time). (A WebSocket's messages come as their own events.)
    private mutating func read(_ flow: NetworkLog) -> [Arrival] {
        guard FlowMessages.isEventStream(flow) else { return [] }
        var reading = readings.removeValue(forKey: flow.id) ?? Reading()
        let marks = flow.parts?.marks ?? []
        let rest: ServerSentEventDecoder.UnmarkedBytes = if flow.state.isFinal {
            .read(at: marks.contains { $0.direction == .response } ? flow.timing.finished : nil)
        } else {
            .wait
        }
        let events = reading.decoder.feed(flow.response?.body?.data ?? Data(), from: &reading.read, marks: marks, rest: rest)
        if !flow.state.isFinal { readings[flow.id] = reading }
        return arrivals(events, of: flow)
    }

    /// A part of a live stream, read straight from the event (applying it
    /// to a copy of the flow would copy the body so far, every part). A
    /// part that does not start where reading stopped (one was lost, or the
    /// capture limit cut one) is left for the end, which reads the body
    /// from there.
    private mutating func read(_ part: BodyPart, of flow: NetworkLog) -> [Arrival] {
        var reading = readings[flow.id] ?? Reading()
        guard part.offset == reading.read, part.body.data.count == part.body.size else {
            readings[flow.id] = reading
            return []
        }
        let events = reading.decoder.feed(part.body.data, at: part.at)
        reading.read += part.body.data.count
        readings[flow.id] = reading
        return arrivals(events, of: flow)
    }

    private func arrivals(_ events: [ServerSentEvent], of flow: NetworkLog) -> [Arrival] {
        events.filter(\.isDispatched).map { event in
            Arrival(flow: flow, item: FlowMessages.Item(detail: .event(event), direction: .response, at: event.at, size: event.size,
                                                       data: Data(event.data.utf8), isTruncated: false))
        }
    }
}
