import Foundation
import WireProtocol

/// `--messages` with `--dump` or `--json`: each server-sent event and
/// WebSocket message as it arrives, not only the flow when it finishes.
/// Events are decoded from the body parts as they come; a stream that
/// arrived whole (quick, or from a version-1 agent) gives its events when
/// the flow finishes, so every event is printed once either way.
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
        package var item: FlowMessages.Item
    }

    /// An event stream being read: its decoder, and the body bytes fed to it.
    private struct Reading: Sendable {
        var decoder = ServerSentEventDecoder()
        var fed = 0
    }

    private var readings: [FlowID: Reading] = [:]

    package init() {}

    /// The messages `event` brings. Call it before the assembler applies
    /// the event: `flowSoFar` gives an in-progress flow as known until now.
    package mutating func apply(_ event: InboxEvent, flowSoFar: (FlowID) -> NetworkLog?) -> [Arrival] {
        guard case .message(_, let message) = event else { return [] }
        switch message {
        case .flowStarted(let log):
            guard log.state.isFinal else { return [] }
            return whole(log)
        case .flowResponse(let response):
            guard MediaType.isEventStream(response.response.mimeType ?? response.response.headers.first("Content-Type")),
                  var flow = flowSoFar(response.id) else { return [] }
            flow.apply(response)
            readings[response.id] = Reading()
            return response.response.body.map { feed($0.data, at: nil, of: flow) } ?? []
        case .bodyPart(let part):
            guard part.part.direction == .response, readings[part.id] != nil, let flow = flowSoFar(part.id) else { return [] }
            return feed(part.part.body.data, at: part.part.at, of: flow)
        case .webSocketMessage(let event):
            guard let flow = flowSoFar(event.id) else { return [] }
            let message = event.message
            return [Arrival(flow: flow, item: FlowMessages.Item(
                detail: .webSocket(message.opcode, closeCode: message.closeCode), direction: message.direction, at: message.at,
                size: message.body.size, data: message.body.data, isTruncated: message.body.isTruncated))]
        case .flowFinished(let finished):
            guard var flow = flowSoFar(finished.id) else { return [] }
            flow.apply(finished)
            guard let fed = readings[finished.id]?.fed else { return whole(flow) }
            defer { readings[finished.id] = nil }
            // The rest of the body the parts did not bring (a version-1 agent sends none).
            guard let data = flow.response?.body?.data, data.count > fed else { return [] }
            return feed(data.dropFirst(fed), at: nil, of: flow)
        default:
            return []
        }
    }

    /// A flow that arrived finished: its events, when it is an event stream
    /// no part of which was read. (A WebSocket's messages come as their own events.)
    private func whole(_ log: NetworkLog) -> [Arrival] {
        guard FlowMessages.isEventStream(log) else { return [] }
        return FlowMessages(log).items.filter { if case .event(let event) = $0.detail { event.isDispatched } else { false } }
            .map { Arrival(flow: log, item: $0) }
    }

    private mutating func feed(_ bytes: Data, at: Double?, of flow: NetworkLog) -> [Arrival] {
        guard var reading = readings[flow.id] else { return [] }
        let events = reading.decoder.feed(bytes, at: at)
        reading.fed += bytes.count
        readings[flow.id] = reading
        return events.filter(\.isDispatched).map { event in
            Arrival(flow: flow, item: FlowMessages.Item(detail: .event(event), direction: .response, at: event.at, size: event.size,
                                                       data: Data(event.data.utf8), isTruncated: false))
        }
    }
}
