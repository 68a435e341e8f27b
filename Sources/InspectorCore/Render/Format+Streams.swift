import Foundation
import WireProtocol

/// How a flow that streams reads while it is live: told apart from one
/// still waiting for its response, with what it has received so far.
extension Format {
    /// The arrow and word of a flow whose response is arriving in parts.
    static let streamingLabel = "⇣ streaming"

    /// Whether the flow is live and its response (or WebSocket) has started
    /// arriving: past the head, before the end.
    static func isStreaming(_ log: NetworkLog) -> Bool {
        guard !log.state.isFinal, log.response != nil else { return false }
        return log.webSocket != nil || (log.parts?.count(of: .response) ?? 0) > 0 || FlowMessages.isEventStream(log)
    }

    /// When the latest part or message arrived, in seconds since the flow's start.
    static func lastPartAt(_ log: NetworkLog) -> Double? {
        let part = log.parts?.lastAt
        let message = log.webSocket?.messages.last?.at
        return [part, message].compactMap { $0 }.max()
    }

    /// `⇣ 1.2s`: how long ago the last part came, the stall a person looks for.
    static func sinceLastPart(_ log: NetworkLog, now: Date) -> String {
        guard let at = lastPartAt(log) else { return "⇣" }
        return "⇣" + duration(max(0, now.timeIntervalSince(log.timing.date(at: at))))
    }

    /// Whether the app sent what went `direction`: on a call it made, the
    /// request's side; on a request it received (an inbound flow, a
    /// server's WebSocket or gRPC method), the response's.
    static func appSent(_ direction: StreamDirection, in log: NetworkLog) -> Bool {
        (log.direction == .inbound) == (direction == .response)
    }

    /// `→` for what the app sent, `←` for what it received, whichever side of the exchange it is on.
    static func arrow(_ direction: StreamDirection, in log: NetworkLog) -> String {
        appSent(direction, in: log) ? "→" : "←"
    }

    /// What a WebSocket flow received, by the messages' true sizes.
    static func webSocketBytes(_ socket: WebSocketSession, _ direction: StreamDirection) -> Int {
        socket.messages.reduce(0) { $0 + ($1.direction == direction ? $1.body.size : 0) }
    }
}
