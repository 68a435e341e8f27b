import Foundation
import ProtobufWire
import WireProtocol

/// The gRPC tab: which RPC the flow is, how it ended, and every message in
/// order, each decoded as protobuf (named by `--proto` descriptor sets when
/// they describe the method, else raw with the readings a value allows).
extension DetailContent {
    static func grpc(_ log: NetworkLog, schema: ProtoSchema, dropped: Bool) -> [StyledLine] {
        guard let call = log.grpc else { return [StyledLine("Not a gRPC call: this flow has no messages to decode", .dim)] }
        let method = schema.method(call.path)
        var lines: [StyledLine] = [
            StyledLine([Span("Call      ", .heading), Span(Format.grpcName(call)),
                        Span(call.kind == nil ? "" : "  " + Format.grpcKind(call, short: false), .dim)]),
            StyledLine([Span("Status    ", .heading)] + statusSpans(call, log: log)),
            StyledLine([Span("Schema    ", .heading), schemaSpan(method, schema: schema)]),
            "",
        ]
        let requests = call.messages.filter { $0.direction == .request }.count
        lines.append(StyledLine([
            Span("Messages (\(call.messages.count))", .heading),
            Span("  \(requests) request\(requests == 1 ? "" : "s"), \(call.messages.count - requests) response\(call.messages.count - requests == 1 ? "" : "s")", .dim),
        ]))
        if call.droppedMessages > 0 {
            lines.append(StyledLine("\(call.droppedMessages) more message\(call.droppedMessages == 1 ? "" : "s") went by that the agent did not keep (its per-call limit)", .warning))
        }
        if dropped { lines.append(StyledLine("Message bytes were dropped to stay within the body budget (--body-budget)", .warning)) }
        if call.messages.isEmpty { lines.append(StyledLine(log.state.isFinal ? "No message was sent either way" : "No message yet", .dim)) }
        var counts: [GRPCMessage.Direction: Int] = [:]
        for message in call.messages {
            counts[message.direction, default: 0] += 1
            let type = message.direction == .request ? method?.inputType : method?.outputType
            lines += messageLines(message, number: counts[message.direction] ?? 1, type: type, schema: schema,
                                  sentByApp: Format.appSent(message.direction, in: log))
        }
        lines.append("")
        lines.append(StyledLine("Trailers (\(call.trailers.count))", .heading))
        for trailer in call.trailers {
            lines.append(StyledLine([Span(trailer.name, .jsonKey), Span(": "), Span(trailer.value)]))
        }
        return lines
    }

    private static func statusSpans(_ call: GRPCCall, log: NetworkLog) -> [Span] {
        guard let status = call.status else {
            return [Span(log.state.isFinal ? "none: the call ended without a gRPC status (\(log.state.rawValue))" : "not finished yet",
                         log.state.isFinal ? .failed : .pending)]
        }
        var spans = [Span("\(status.name) (\(status.code))", Format.style(forGRPC: status))]
        if let message = status.message, !message.isEmpty { spans.append(Span("  " + message)) }
        return spans
    }

    private static func schemaSpan(_ method: ProtoSchema.Method?, schema: ProtoSchema) -> Span {
        if let method { return Span("\(method.inputType) → \(method.outputType)  (from --proto)", .dim) }
        if schema.isEmpty { return Span("none: fields shown by number, values guessed (--proto FILE.pb names them)", .dim) }
        return Span("the --proto descriptor sets do not describe this method: fields shown by number", .warning)
    }

    /// One message: its heading (direction, number, time, size), then its fields.
    /// `sentByApp`: the arrow says who sent it (``Format/appSent(_:in:)``), the word which side of the call it is.
    static func messageLines(_ message: GRPCMessage, number: Int, type: String?, schema: ProtoSchema, sentByApp: Bool) -> [StyledLine] {
        let arrow = (sentByApp ? "→ " : "← ") + (message.direction == .request ? "request" : "response")
        var heading = [
            Span("\(arrow) \(number)".padding(toLength: 15, withPad: " ", startingAt: 0), sentByApp ? .method : .inbound),
            Span(("+" + Format.milliseconds(message.at)).fitted(toWidth: 11, alignRight: true)),
            Span("  " + Format.size(message.body.size)),
        ]
        if let type { heading.append(Span("  " + type, .dim)) }
        if message.body.isTruncated {
            heading.append(Span("  first \(Format.size(message.body.data.count)) kept", .warning))
        }
        var lines: [StyledLine] = ["", StyledLine(heading)]
        let bytes = [UInt8](message.body.data)
        guard !bytes.isEmpty || message.body.size == 0 else {
            return lines + [StyledLine("    (bytes not kept)", .dim)]
        }
        do {
            let decoded = try DecodedMessage(bytes: bytes, typeName: type, schema: schema)
            if decoded.fields.isEmpty { lines.append(StyledLine("    (empty message: every field has its default)", .dim)) }
            for line in decoded.lines(schema: schema) {
                let indent = String(repeating: "  ", count: 2 + line.depth)
                guard !line.label.isEmpty else {
                    lines.append(StyledLine([Span(indent), Span(line.value, .jsonPunctuation)]))
                    continue
                }
                lines.append(StyledLine([
                    Span(indent), Span(line.label, .jsonKey), Span(": "),
                    Span(line.value, valueStyle(line.value)), Span(line.note.isEmpty ? "" : "   " + line.note, .dim),
                ]))
            }
        } catch {
            let why = message.body.isTruncated ? "cut short by the capture limit" : "not protobuf"
            lines.append(StyledLine("    \(why): \(error)", .warning))
            lines += BodyFormatter.hexDump(message.body.data).map { StyledLine([Span("    ")] + $0.spans) }
        }
        return lines
    }

    private static func valueStyle(_ value: String) -> Style {
        switch value.first {
        case "\"": .jsonString
        case "{", "[": .jsonPunctuation
        case let first? where first.isNumber || first == "-": .jsonNumber
        default: .jsonLiteral
        }
    }
}
