import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter

/// `~websocket`, `~stream`, and `~b` reading a stream's messages.
final class StreamFilterTests: XCTestCase {
    private func flow(contentType: String? = "application/json") -> NetworkLog {
        NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1:8080/x"),
                   response: Response(statusCode: 200, headers: contentType.map { [HTTPHeader(name: "Content-Type", value: $0)] } ?? []),
                   timing: Timing(startedAt: Date(timeIntervalSince1970: 0)))
    }

    private func webSocket(_ messages: [(StreamDirection, String)]) -> NetworkLog {
        var log = flow(contentType: nil)
        log.webSocket = WebSocketSession(messages: messages.enumerated().map { index, message in
            WebSocketMessage(direction: message.0, at: Double(index), opcode: .text, body: CapturedBody(data: Data(message.1.utf8)), closeCode: nil)
        })
        return log
    }

    private func matches(_ text: String, _ log: NetworkLog, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        do {
            return try FilterExpression.parse(text).matches(log)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
            return false
        }
    }

    func testWebSocketSelectsWebSocketsOnly() {
        XCTAssertTrue(matches("~websocket", webSocket([])))
        XCTAssertFalse(matches("~websocket", flow()))
    }

    func testStreamSelectsWebSocketsEventStreamsBodiesInPartsAndStreamingCalls() {
        XCTAssertTrue(matches("~stream", webSocket([])))
        XCTAssertTrue(matches("~stream", flow(contentType: "text/event-stream; charset=utf-8")))
        var parted = flow()
        parted.parts = BodyParts(marks: [BodyPartMark(direction: .response, at: 0.5, offset: 0, size: 10)])
        XCTAssertTrue(matches("~stream", parted))
        var call = flow()
        call.grpc = GRPCCall(service: "echo.Echo", method: "Expand", kind: .serverStreaming)
        XCTAssertTrue(matches("~stream", call))
        call.grpc = GRPCCall(service: "echo.Echo", method: "Get", kind: .unary)
        XCTAssertFalse(matches("~stream", call))
        XCTAssertFalse(matches("~stream", flow()))
    }

    func testBodyMatchesAWebSocketsMessagesByDirection() {
        let log = webSocket([(.request, "subscribe prices"), (.response, "price 42")])
        XCTAssertTrue(matches("~b subscribe", log))
        XCTAssertTrue(matches("~b 'price 4'", log))
        XCTAssertTrue(matches("~bq subscribe", log))
        XCTAssertFalse(matches("~bs subscribe", log), "the app sent it; ~bs reads what it received")
        XCTAssertTrue(matches("~bs 'price 42'", log))
        XCTAssertFalse(matches("~b nothing", log))
    }

    func testBodyMatchesAGRPCCallsMessages() {
        var log = flow()
        log.grpc = GRPCCall(service: "echo.Echo", method: "Get", messages: [
            GRPCMessage(direction: .response, at: 0.1, body: CapturedBody(data: Data("\u{0A}\u{05}hello".utf8))),
        ])
        XCTAssertTrue(matches("~bs hello", log))
        XCTAssertFalse(matches("~bq hello", log))
    }

    func testTheSummaryNamesTheNewOperators() {
        let syntax = FilterExpression.syntaxSummary.map(\.syntax)
        XCTAssertTrue(syntax.contains("~websocket"))
        XCTAssertTrue(syntax.contains("~stream"))
    }
}
