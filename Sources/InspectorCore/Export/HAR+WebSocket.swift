import Foundation
import WireProtocol

// A WebSocket's messages go in the entry's `_webSocketMessages`, as Chrome's
// DevTools writes them: `type` "send" (the app sent it: on a request the app
// received, a message to its client) or "receive", `time`
// in seconds since 1970, `opcode` as RFC 6455 numbers it (1 text, 2 binary,
// 8 close, 9 ping, 10 pong), `data` the payload (text as it is, anything
// else base64, as Chrome does). What Chrome leaves out and netinspect needs
// to restore the flow rides along in `_`-named members: the close code, the
// true size of a message cut at the capture limit. `--read` restores the
// session from them, Chrome's files included. docs/GUIDE.md says the same.

extension HAR {
    /// One message of `_webSocketMessages`.
    struct WebSocketMessageRecord: Encodable, Sendable, Equatable {
        var type: String
        var time: Double
        var opcode: Int
        var data: String
        var closeCode: Int? = nil
        var size: Int? = nil
        var truncated: Bool? = nil

        enum CodingKeys: String, CodingKey {
            case type, time, opcode, data
            case closeCode = "_closeCode", size = "_size", truncated = "_truncated"
        }
    }
}

extension WebSocketOpcode {
    /// RFC 6455's number for the opcode.
    var frameOpcode: Int {
        switch self {
        case .text: 1
        case .binary: 2
        case .close: 8
        case .ping: 9
        case .pong: 10
        }
    }

    init?(frameOpcode: Int) {
        switch frameOpcode {
        case 1: self = .text
        case 2: self = .binary
        case 8: self = .close
        case 9: self = .ping
        case 10: self = .pong
        default: return nil
        }
    }
}

extension HAR.WebSocketMessageRecord {
    /// A message of `log`'s WebSocket: "send" when its app sent it, whichever side of the exchange the app is on.
    init(_ message: WebSocketMessage, startedAt: Date, in log: NetworkLog) {
        let isText = message.opcode == .text || message.opcode == .close
        self.init(type: Format.appSent(message.direction, in: log) ? "send" : "receive",
                  time: startedAt.addingTimeInterval(message.at).timeIntervalSince1970,
                  opcode: message.opcode.frameOpcode,
                  data: isText ? String(decoding: message.body.data, as: UTF8.self) : message.body.data.base64EncodedString(),
                  closeCode: message.closeCode,
                  size: message.body.size == message.body.data.count ? nil : message.body.size,
                  truncated: message.body.isTruncated ? true : nil)
    }
}

extension NetworkLog {
    /// The WebSocket messages of a HAR entry (`_webSocketMessages`), when it has them.
    mutating func restoreWebSocket(from entry: JSONValue) {
        guard let records = entry["_webSocketMessages"]?.arrayValue else { return }
        var session = WebSocketSession()
        for record in records {
            guard let opcode = record["opcode"]?.intValue.flatMap(WebSocketOpcode.init(frameOpcode:)) else { continue }
            let text = record["data"]?.stringValue ?? ""
            let isText = opcode == .text || opcode == .close
            let data = isText ? Data(text.utf8) : Data(base64Encoded: text) ?? Data(text.utf8)
            let at = (record["time"]?.doubleValue).map { $0 - timing.startedAt.timeIntervalSince1970 } ?? 0
            let body = CapturedBody(data: data, size: record["_size"]?.intValue ?? data.count, isTruncated: record["_truncated"]?.boolValue ?? false)
            // "send" is the app's: the client's side, or the server's on a request the app received.
            let appSent = record["type"]?.stringValue == "send"
            let direction: StreamDirection = appSent == (self.direction != .inbound) ? .request : .response
            let message = WebSocketMessage(direction: direction, at: at, opcode: opcode,
                                           body: body, closeCode: record["_closeCode"]?.intValue)
            session.messages.append(message)
        }
        webSocket = session
    }
}
