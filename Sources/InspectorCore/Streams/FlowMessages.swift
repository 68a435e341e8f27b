import Foundation
import WireProtocol

/// Every message of a flow, whatever carried it: the server-sent events of
/// a `text/event-stream` body, a WebSocket's messages, a gRPC call's
/// messages. The messages tab, `~b` and the headless formats read flows
/// through this one list.
///
/// ```swift
/// let messages = FlowMessages(log)
/// messages.kind            // .serverSentEvents
/// messages.items.count
/// messages.events?.ending  // .live while the body still grows
/// ```
package struct FlowMessages: Sendable {
    /// What carried the messages.
    package enum Kind: Sendable, Equatable {
        case serverSentEvents, webSocket, grpc
    }

    /// One message, event or frame.
    package struct Item: Sendable {
        /// An event's fields, a WebSocket frame's opcode, or nothing for gRPC.
        enum Detail: Sendable {
            case event(ServerSentEvent)
            case webSocket(WebSocketOpcode, closeCode: Int?)
            case grpc
        }

        var detail: Detail
        var direction: StreamDirection
        /// Seconds since the flow's start, when known.
        var at: Double?
        /// The true size: an event's block, a frame's or message's payload.
        var size: Int
        /// The content as kept: an event's data, a frame's or message's payload.
        var data: Data
        /// Whether the capture limit cut the content.
        var isTruncated: Bool
    }

    /// What carried them; nil for a flow that has none.
    var kind: Kind?
    /// The messages in the order they went by.
    var items: [Item]
    /// The events' stream, for a `text/event-stream` body.
    var events: ServerSentEventStream?
    /// Messages the agent counted but did not keep (its per-flow limit).
    var dropped: Int

    /// Reads the flow's messages.
    init(_ log: NetworkLog) {
        items = []
        dropped = 0
        if let socket = log.webSocket {
            kind = .webSocket
            dropped = socket.droppedMessages
            items = socket.messages.map { message in
                Item(detail: .webSocket(message.opcode, closeCode: message.closeCode), direction: message.direction, at: message.at,
                     size: message.body.size, data: message.body.data, isTruncated: message.body.isTruncated)
            }
        } else if let call = log.grpc {
            kind = .grpc
            dropped = call.droppedMessages
            items = call.messages.map { message in
                Item(detail: .grpc, direction: message.direction, at: message.at, size: message.body.size, data: message.body.data,
                     isTruncated: message.body.isTruncated)
            }
        } else if let stream = Self.eventStream(of: log) {
            kind = .serverSentEvents
            events = stream
            items = stream.events.map { event in
                Item(detail: .event(event), direction: .response, at: event.at, size: event.size, data: Data(event.data.utf8),
                     isTruncated: false)
            }
        }
    }

    /// Whether the flow has a messages tab: a WebSocket, a gRPC call, or a
    /// response declared as `text/event-stream`. Cheap: read by the tab bar.
    static func hasMessages(_ log: NetworkLog) -> Bool {
        log.webSocket != nil || log.grpc != nil || isEventStream(log)
    }

    /// Whether the response is declared `text/event-stream`.
    static func isEventStream(_ log: NetworkLog) -> Bool {
        guard let response = log.response else { return false }
        return MediaType.isEventStream(response.mimeType ?? response.headers.first("Content-Type"))
    }

    /// The response body read as events, timed by the parts it came in
    /// (the last ones, which came with the flow's end, by the end).
    static func eventStream(of log: NetworkLog) -> ServerSentEventStream? {
        guard isEventStream(log), let response = log.response else { return nil }
        let body = response.body ?? CapturedBody(data: Data())
        return ServerSentEventStream(body: body, parts: log.parts?.marks ?? [], state: log.state, endedAt: log.timing.finished)
    }
}
