import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// HAR keeps a WebSocket's messages as Chrome writes them
/// (`_webSocketMessages`), and an event stream's body whole.
final class HARStreamsTests: XCTestCase {
    private func webSocketFlow() -> NetworkLog {
        var log = Fixtures.started(1, url: "ws://127.0.0.1:8080/chat")
        log.response = Response(statusCode: 101, headers: [HTTPHeader(name: "Upgrade", value: "websocket")])
        log.state = .completed
        log.webSocket = WebSocketSession(messages: [
            WebSocketMessage(direction: .request, at: 0.5, opcode: .text, body: CapturedBody(data: Data("hello".utf8)), closeCode: nil),
            WebSocketMessage(direction: .response, at: 0.75, opcode: .binary, body: CapturedBody(data: Data([0, 1, 2])), closeCode: nil),
            WebSocketMessage(direction: .response, at: 1, opcode: .close, body: CapturedBody(data: Data("bye".utf8)), closeCode: 1000),
        ])
        return log
    }

    func testWebSocketMessagesAreWrittenAsChromeWritesThem() throws {
        let data = try HARFile.encode([webSocketFlow()])
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entry = try XCTUnwrap(((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let messages = try XCTUnwrap(entry["_webSocketMessages"] as? [[String: Any]])
        XCTAssertEqual(messages.count, 3)
        XCTAssertEqual(messages[0]["type"] as? String, "send")
        XCTAssertEqual(messages[0]["opcode"] as? Int, 1)
        XCTAssertEqual(messages[0]["data"] as? String, "hello")
        XCTAssertEqual(try XCTUnwrap(messages[0]["time"] as? Double), Fixtures.epoch.timeIntervalSince1970 + 1.5, accuracy: 0.000_001,
                       "seconds since 1970: the flow's start plus the message's offset")
        XCTAssertEqual(messages[1]["type"] as? String, "receive")
        XCTAssertEqual(messages[1]["opcode"] as? Int, 2)
        XCTAssertEqual(messages[1]["data"] as? String, "AAEC", "binary in base64")
        XCTAssertEqual(messages[2]["opcode"] as? Int, 8)
        XCTAssertEqual(messages[2]["_closeCode"] as? Int, 1000)
    }

    func testReadingTheHARBackRestoresTheMessages() throws {
        let original = webSocketFlow()
        let read = try XCTUnwrap(HARFile.decode(try HARFile.encode([original])).first)
        let messages = try XCTUnwrap(read.webSocket?.messages)
        XCTAssertEqual(messages.map(\.opcode), [.text, .binary, .close])
        XCTAssertEqual(messages.map(\.direction), [.request, .response, .response])
        XCTAssertEqual(messages.map(\.body.data), [Data("hello".utf8), Data([0, 1, 2]), Data("bye".utf8)])
        XCTAssertEqual(messages[2].closeCode, 1000)
        XCTAssertEqual(messages[0].at, 0.5, accuracy: 0.001)
    }

    /// On a WebSocket the app served (an inbound flow), "send" is what the
    /// app sent its client, as on one it opened: the client's messages were
    /// written as the app's own.
    func testAServedWebSocketsMessagesAreWrittenFromTheAppsSideAndReadBack() throws {
        var served = webSocketFlow()
        served.direction = .inbound
        let data = try HARFile.encode([served])
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entry = try XCTUnwrap(((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let messages = try XCTUnwrap(entry["_webSocketMessages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["type"] as? String }, ["receive", "send", "send"], "the client's hello reached the app; the rest the app sent")
        let read = try XCTUnwrap(HARFile.decode(data).first)
        XCTAssertEqual(read.direction, .inbound)
        XCTAssertEqual(read.webSocket?.messages.map(\.direction), [.request, .response, .response])
    }

    func testAnEventStreamBodyIsWrittenWhole() throws {
        var events = ""
        for number in 1...300 { events += "data: {\"n\":\(number)}\n\n" }
        var log = Fixtures.started(1)
        log.response = Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")],
                                body: CapturedBody(data: Data(events.utf8)), mimeType: "text/event-stream")
        log.state = .completed
        let read = try XCTUnwrap(HARFile.decode(try HARFile.encode([log])).first)
        XCTAssertEqual(read.response?.body?.data, Data(events.utf8))
    }
}
