import Foundation
import WireProtocol

/// How `--messages` prints a message: a `--dump` line, or a `--json` object
/// with a `message` member (a flow's own line has none).
///
/// ```
/// 10:32:08.623 ← event  http://127.0.0.1:8080/chat  +512.0 ms  42 B  message  {"choices":[…]}  #3F2A09C1
/// 10:32:09.001 → text  ws://127.0.0.1:8080/echo  +12.0 ms  5 B  hello  #81B2F003
/// ```
extension MessageTap.Arrival {
    /// The `--dump` line (without a newline): the message's time, its
    /// direction and kind, the flow's URL, its offset and size, what it
    /// says on one line, and the flow's short id.
    package func dumpLine(in zone: TimeZone) -> String {
        let item = self.item
        let time = Format.time(flow.timing.date(at: item.at ?? 0), in: zone, milliseconds: true)
        var parts: [String] = []
        let arrow = Format.arrow(item.direction, in: flow)
        var label: [String] = []
        var content: String
        switch item.detail {
        case .event(let event):
            parts.append(arrow + " event")
            label.append(event.type)
            if let id = event.id { label.append("id " + id) }
            content = event.data
        case let .webSocket(opcode, closeCode):
            parts.append(arrow + " " + opcode.rawValue)
            if let closeCode { label.append("code \(closeCode)") }
            content = opcode == .binary ? "0x" + item.data.prefix(32).map { String(format: "%02x", $0) }.joined() + (item.data.count > 32 ? "…" : "")
                : String(decoding: item.data, as: UTF8.self)
        case .grpc:
            parts.append(arrow + " gRPC")
            content = ""
        }
        parts.append(flow.request.url)
        parts.append(item.at.map { "+" + Format.milliseconds($0) } ?? "-")
        parts.append(Format.size(item.size))
        parts += label
        if !content.isEmpty { parts.append(Self.oneLine(content)) }
        parts.append("#" + DumpFormat.shortID(flow.id))
        return time + " " + parts.joined(separator: "  ")
    }

    /// The `--json` line: `{"flow": id, "url": …, "message": {…}}`.
    package func jsonLine() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(JSONMessageLine(self))) ?? Data()
    }

    /// Control characters would break one-message-per-line output (and could drive the terminal).
    private static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}

/// The `--json` form of a message.
private struct JSONMessageLine: Encodable {
    struct Body: Encodable {
        var kind: String
        var direction: String
        var at: Double?
        var date: Double
        var size: Int
        var event: String?
        var id: String?
        var retry: Int?
        var opcode: String?
        var closeCode: Int?
        var text: String?
        var base64: String?
        var truncated: Bool?
    }

    var flow: String
    var url: String
    var message: Body

    init(_ arrival: MessageTap.Arrival) {
        let item = arrival.item
        flow = arrival.flow.id.description
        url = arrival.flow.request.url
        message = Body(kind: "", direction: item.direction.rawValue, at: item.at,
                       date: arrival.flow.timing.date(at: item.at ?? 0).timeIntervalSince1970, size: item.size,
                       truncated: item.isTruncated ? true : nil)
        switch item.detail {
        case .event(let event):
            message.kind = "event"
            message.event = event.type
            message.id = event.id
            message.retry = event.retry
            message.text = event.data
        case let .webSocket(opcode, closeCode):
            message.kind = "webSocket"
            message.opcode = opcode.rawValue
            message.closeCode = closeCode
            if opcode == .binary { message.base64 = item.data.base64EncodedString() } else { message.text = String(decoding: item.data, as: UTF8.self) }
        case .grpc:
            message.kind = "grpc"
            message.base64 = item.data.base64EncodedString()
        }
    }
}
