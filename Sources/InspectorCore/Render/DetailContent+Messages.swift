import Foundation
import ProtobufWire
import WireProtocol

/// The messages tab: a flow's server-sent events, WebSocket messages or
/// gRPC messages in one list, each with its direction, time, gap, size and
/// content decoded (JSON pretty, protobuf as the gRPC tab reads it, text,
/// hex); a streamed completion's assembled text first.
extension DetailContent {
    static func messages(_ log: NetworkLog, schema: ProtoSchema) -> [StyledLine] {
        let messages = FlowMessages(log)
        guard let kind = messages.kind else {
            return [StyledLine("No messages: this flow is not a WebSocket, a gRPC call or a text/event-stream response", .dim)]
        }
        var lines = summaryLines(messages, kind: kind, log: log)
        if let events = messages.events, let llm = LLMStream(events: events.events) { lines += llmLines(llm) }
        lines.append("")
        if messages.items.isEmpty { lines.append(StyledLine(log.state.isFinal ? "No message went by" : "No message yet", .dim)) }
        let method = log.grpc.flatMap { schema.method($0.path) }
        var counts: [StreamDirection: Int] = [:]
        var previousAt: Double?
        var dispatched = 0
        for item in messages.items {
            counts[item.direction, default: 0] += 1
            let number = counts[item.direction] ?? 1
            switch item.detail {
            case .grpc:
                let type = item.direction == .request ? method?.inputType : method?.outputType
                let message = GRPCMessage(direction: item.direction, at: item.at ?? 0,
                                          body: CapturedBody(data: item.data, size: item.size, isTruncated: item.isTruncated))
                lines += messageLines(message, number: number, type: type, schema: schema, sentByApp: Format.appSent(item.direction, in: log))
            case .event(let event):
                if event.isDispatched { dispatched += 1 }
                lines += eventLines(event, number: dispatched, sentByApp: Format.appSent(.response, in: log))
            case let .webSocket(opcode, closeCode):
                lines += webSocketLines(item, opcode: opcode, closeCode: closeCode, number: number, gap: previousAt.flatMap { at in item.at.map { $0 - at } },
                                        sentByApp: Format.appSent(item.direction, in: log))
            }
            if item.at != nil { previousAt = item.at }
        }
        if let events = messages.events { lines += endingLines(events) }
        return lines
    }

    private static func summaryLines(_ messages: FlowMessages, kind: FlowMessages.Kind, log: NetworkLog) -> [StyledLine] {
        let sent = messages.items.filter { Format.appSent($0.direction, in: log) }.count
        let received = messages.items.count - sent
        var lines: [StyledLine] = []
        switch kind {
        case .serverSentEvents:
            let events = messages.events?.dispatched.count ?? 0
            lines.append(StyledLine([Span("Server-sent events (\(events))", .heading), Span("  " + stateText(messages.events?.ending), stateStyle(messages.events?.ending))]))
            if messages.events?.isTruncated == true {
                lines.append(StyledLine("The body was cut at the capture limit: later events are missing", .warning))
            }
        case .webSocket:
            var text = "  \(sent) sent, \(received) received"
            if let close = log.webSocket?.close {
                let reason = String(decoding: close.body.data, as: UTF8.self)
                text += " · closed by the \(Format.appSent(close.direction, in: log) ? "app" : "peer")" + (close.closeCode.map { " with \($0)" } ?? "")
                    + (reason.isEmpty ? "" : " “\(reason)”")
            } else if !log.state.isFinal {
                text += " · open"
            }
            lines.append(StyledLine([Span("WebSocket messages (\(messages.items.count))", .heading), Span(text, .dim)]))
        case .grpc:
            lines.append(StyledLine([Span("gRPC messages (\(messages.items.count))", .heading), Span("  \(sent) request, \(received) response", .dim)]))
        }
        if messages.dropped > 0 {
            lines.append(StyledLine("\(messages.dropped) more went by that the agent did not keep (its per-flow limit)", .warning))
        }
        return lines
    }

    private static func stateText(_ ending: ServerSentEventStream.Ending?) -> String {
        switch ending {
        case .live?, nil: "⇣ streaming"
        case .clean?: "ended cleanly"
        case .cutOff(let why)?: "cut off: \(why)"
        }
    }

    private static func stateStyle(_ ending: ServerSentEventStream.Ending?) -> Style {
        switch ending {
        case .live?, nil: .pending
        case .clean?: .status2xx
        case .cutOff?: .failed
        }
    }

    /// The text a streamed completion delivered, and its pace.
    private static func llmLines(_ llm: LLMStream) -> [StyledLine] {
        var pace: [String] = []
        if let first = llm.firstEventAt { pace.append("first event +" + Format.milliseconds(first)) }
        if let rate = llm.eventsPerSecond { pace.append(Format.fixed(rate, decimals: 1) + " events/s") }
        pace.append("\(llm.deltas) deltas, \(llm.text.count) characters")
        var lines: [StyledLine] = ["", StyledLine([Span("Assembled text", .heading), Span("  \(llm.provider.rawValue) · " + pace.joined(separator: " · "), .dim)])]
        lines += llm.text.split(separator: "\n", omittingEmptySubsequences: false).map { StyledLine("  " + $0) }
        return lines
    }

    /// One block of the event stream: an event, or what a block without
    /// data sets (retry, id) or says (comments).
    private static func eventLines(_ event: ServerSentEvent, number: Int, sentByApp: Bool) -> [StyledLine] {
        var heading: [Span]
        if event.isDispatched {
            heading = [Span("\(sentByApp ? "→" : "←") event \(number)".padding(toLength: 15, withPad: " ", startingAt: 0), sentByApp ? .method : .inbound)]
        } else {
            heading = [Span((event.comments.isEmpty ? "  (no data)" : "  : comment").padding(toLength: 15, withPad: " ", startingAt: 0), .dim)]
        }
        heading += timeSpans(at: event.at, gap: event.gap)
        heading.append(Span("  " + Format.size(event.size)))
        if event.isDispatched { heading.append(Span("  " + event.type, event.event == nil ? .dim : .jsonKey)) }
        if let id = event.id { heading.append(Span("  id " + id, .dim)) }
        if let retry = event.retry { heading.append(Span("  retry \(retry) ms", .warning)) }
        if event.isDone { heading.append(Span("  [DONE]: the end of the stream", .status2xx)) }
        var lines: [StyledLine] = ["", StyledLine(heading)]
        for comment in event.comments { lines.append(StyledLine("    : " + comment, .dim)) }
        if event.isDispatched, !event.isDone {
            lines += contentLines(Data(event.data.utf8), binary: false)
        }
        return lines
    }

    private static func webSocketLines(_ item: FlowMessages.Item, opcode: WebSocketOpcode, closeCode: Int?, number: Int, gap: Double?,
                                       sentByApp: Bool) -> [StyledLine] {
        var heading = [
            Span("\(sentByApp ? "→" : "←") \(opcode.rawValue) \(number)".padding(toLength: 15, withPad: " ", startingAt: 0),
                 sentByApp ? .method : .inbound),
        ]
        heading += timeSpans(at: item.at, gap: gap)
        heading.append(Span("  " + Format.size(item.size)))
        if item.isTruncated { heading.append(Span("  first \(Format.size(item.data.count)) kept", .warning)) }
        var lines: [StyledLine] = ["", StyledLine(heading)]
        switch opcode {
        case .close:
            let reason = String(decoding: item.data, as: UTF8.self)
            lines.append(StyledLine("    close " + (closeCode.map(String.init) ?? "(no code)") + (reason.isEmpty ? "" : " “\(reason)”")))
        case .ping, .pong:
            if !item.data.isEmpty { lines += contentLines(item.data, binary: true) }
        case .text, .binary:
            lines += contentLines(item.data, binary: opcode == .binary)
        }
        return lines
    }

    private static func timeSpans(at: Double?, gap: Double?) -> [Span] {
        [
            Span((at.map { "+" + Format.milliseconds($0) } ?? "").fitted(toWidth: 11, alignRight: true)),
            Span((gap.map { "  Δ" + Format.milliseconds($0) } ?? "").padding(toLength: 13, withPad: " ", startingAt: 0), .dim),
        ]
    }

    /// A message's content, indented: JSON pretty, text as text, binary in hex.
    private static func contentLines(_ data: Data, binary: Bool) -> [StyledLine] {
        guard !data.isEmpty else { return [StyledLine("    (empty)", .dim)] }
        return BodyFormatter.lines(for: CapturedBody(data: data), contentType: nil, view: binary ? .hex : .auto)
            .map { StyledLine([Span("    ")] + $0.spans) }
    }

    private static func endingLines(_ events: ServerSentEventStream) -> [StyledLine] {
        switch events.ending {
        case .live: ["", StyledLine("⇣ streaming: more events may come", .pending)]
        case .clean: ["", StyledLine("The stream ended cleanly: the flow completed after a whole event", .status2xx)]
        case .cutOff(let why): ["", StyledLine("The stream was cut off: \(why)", .failed)]
        }
    }
}
