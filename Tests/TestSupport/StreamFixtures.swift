import Foundation
import WireProtocol

/// Flows that stream: a response read as server-sent events part by part,
/// a WebSocket and its messages, JSON-RPC calls.
package enum StreamFixtures {
    package static func chunk(_ content: String) -> String {
        #"data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\#(content)"}}]}"# + "\n\n"
    }

    /// The start and response head of an event stream, flow `number`.
    package static func eventStreamHead(_ number: Int, url: String = "https://api.example.com/v1/chat/completions") -> [Message] {
        [
            .flowStarted(Fixtures.started(number, method: "POST", url: url)),
            .flowResponse(FlowResponse(
                id: Fixtures.id(number),
                response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")],
                                   mimeType: "text/event-stream"),
                timing: Timing(startedAt: Fixtures.epoch.addingTimeInterval(Double(number)), requestSent: 0.01, firstResponseByte: 0.2))),
        ]
    }

    /// A part of flow `number`'s response body: `text` at `offset`, `at` seconds in.
    package static func part(_ number: Int, _ text: String, offset: Int, at: Double) -> Message {
        .bodyPart(BodyPartEvent(id: Fixtures.id(number), part: BodyPart(direction: .response, at: at, offset: offset,
                                                                        body: CapturedBody(data: Data(text.utf8)))))
    }

    /// Parts of `text`, cut at `cuts`, `interval` seconds apart from 0.5 s.
    package static func parts(_ number: Int, _ text: String, cuts: [Int], from start: Int = 0, firstAt: Double = 0.5, interval: Double = 0.25) -> [Message] {
        let bytes = Array(text.utf8)
        var messages: [Message] = []
        var from = 0
        for (index, cut) in (cuts + [bytes.count]).enumerated() {
            messages.append(.bodyPart(BodyPartEvent(id: Fixtures.id(number), part: BodyPart(
                direction: .response, at: firstAt + Double(index) * interval, offset: start + from,
                body: CapturedBody(data: Data(bytes[from..<cut]))))))
            from = cut
        }
        return messages
    }

    /// Flow `number` finished with `body` whole, or failed.
    package static func finish(_ number: Int, body: String, state: FlowState = .completed, at: Double = 3) -> Message {
        .flowFinished(FlowFinished(
            id: Fixtures.id(number), state: state,
            response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")],
                               body: CapturedBody(data: Data(body.utf8)), mimeType: "text/event-stream"),
            error: state == .failed ? FlowError(domain: "NIOCore.ChannelError", code: 1, message: "connection reset by peer") : nil,
            timing: Timing(startedAt: Fixtures.epoch.addingTimeInterval(Double(number)), requestSent: 0.01, firstResponseByte: 0.2, finished: at)))
    }

    /// A WebSocket's upgrade flow, `number`, and its head.
    package static func webSocketHead(_ number: Int) -> [Message] {
        var log = Fixtures.started(number, url: "ws://127.0.0.1:8080/chat")
        log.webSocket = WebSocketSession()
        return [
            .flowStarted(log),
            .flowResponse(FlowResponse(id: Fixtures.id(number), response: Response(statusCode: 101, headers: [HTTPHeader(name: "Upgrade", value: "websocket")]),
                                       timing: Timing(startedAt: Fixtures.epoch.addingTimeInterval(Double(number)), requestSent: 0.001, firstResponseByte: 0.002))),
        ]
    }

    package static func webSocket(_ number: Int, _ direction: StreamDirection, _ opcode: WebSocketOpcode, _ data: Data, at: Double, closeCode: Int? = nil) -> Message {
        .webSocketMessage(WebSocketMessageEvent(id: Fixtures.id(number), message: WebSocketMessage(
            direction: direction, at: at, opcode: opcode, body: CapturedBody(data: data), closeCode: closeCode)))
    }
}
