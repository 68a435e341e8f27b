import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// `--messages`: each server-sent event and WebSocket message gets its line
/// as it arrives, once, whether the stream came in parts or whole.
final class HeadlessMessageLinesTests: XCTestCase {
    /// Runs `messages` through a tap and an assembler as `--dump` does;
    /// returns the lines printed after each message.
    private func run(_ messages: [Message]) -> [[String]] {
        var tap = MessageTap()
        var assembler = FlowAssembler()
        var printed: [[String]] = []
        for event in Fixtures.connection(messages: messages) {
            var lines = tap.apply(event, flowSoFar: assembler.inProgress).map { $0.dumpLine(in: Fixtures.utc) }
            lines += assembler.apply(event).map { DumpFormat.line($0.log, in: Fixtures.utc) }
            printed.append(lines)
        }
        return Array(printed.dropFirst())   // the connection itself prints nothing
    }

    func testEachEventIsPrintedWhenThePartThatEndsItArrives() {
        let first = StreamFixtures.chunk("Hel"), second = StreamFixtures.chunk("lo")
        let text = first + second
        let printed = run(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, text, cuts: [10, first.utf8.count + 5])
            + [StreamFixtures.finish(1, body: text)])
        XCTAssertEqual(printed[0], [], "flowStarted")
        XCTAssertEqual(printed[1], [], "the response head")
        XCTAssertEqual(printed[2], [], "part of the first event")
        XCTAssertEqual(printed[3].count, 1, "the rest of the first event: \(printed[3])")
        XCTAssertTrue(printed[3][0].hasPrefix("09:30:01.750 ← event  https://api.example.com/v1/chat/completions  +750.0 ms  "), printed[3][0])
        XCTAssertTrue(printed[3][0].hasSuffix(#"message  {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}  #00000000"#),
                      printed[3][0])
        XCTAssertEqual(printed[4].count, 1, "the second event")
        XCTAssertEqual(printed[5].count, 1, "the flow's own line, no event twice: \(printed[5])")
        XCTAssertTrue(printed[5][0].contains("POST   200 https://api.example.com/v1/chat/completions"), printed[5][0])
    }

    func testAStreamWhoseStartCarriesItsFirstPartsPrintsThemAtOnce() {
        // The agent folds a quick response head and first parts into the flow's start while that waits in its queue.
        let first = StreamFixtures.chunk("The "), second = StreamFixtures.chunk("fox ")
        var start = Fixtures.started(1, method: "POST", url: "https://api.example.com/v1/chat/completions")
        guard case .flowResponse(let head) = StreamFixtures.eventStreamHead(1)[1], case .bodyPart(let part) = StreamFixtures.part(1, first, offset: 0, at: 0.024)
        else { return XCTFail("fixtures") }
        start.apply(head)
        start.apply(part)
        let printed = run([.flowStarted(start), StreamFixtures.part(1, second, offset: first.utf8.count, at: 0.5),
                           StreamFixtures.finish(1, body: first + second)])
        XCTAssertEqual(printed[0].count, 1, "the first event, with the start that brought it: \(printed[0])")
        XCTAssertTrue(printed[0].first?.contains("+24.0 ms") == true && printed[0].first?.contains("The ") == true, "\(printed[0])")
        XCTAssertEqual(printed[1].count, 1, "the second event")
        XCTAssertEqual(printed[2].count, 1, "the flow's own line, no event twice: \(printed[2])")
    }

    func testAStreamWhoseFirstBytesCameBeforeItsPartsPrintsEachEventOnceInOrder() {
        // A flow that started before the agent streamed parts (its viewer not yet on version 2): its first part starts past 0.
        let events = ["The ", "quick ", "fox "].map(StreamFixtures.chunk)
        let text = events.joined()
        let skipped = events[0].utf8.count
        let printed = run(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, String(text.dropFirst(skipped)), cuts: [events[1].utf8.count], from: skipped)
            + [StreamFixtures.finish(1, body: text)])
        let lines = printed.flatMap { $0 }.filter { $0.contains("← event") }
        XCTAssertEqual(lines.map { line in ["The ", "quick ", "fox "].first { line.contains("\"\($0)\"") } ?? "?" }, ["The ", "quick ", "fox "],
                       lines.joined(separator: "\n"))
    }

    func testAStreamThatCameWholePrintsItsEventsWhenItFinishes() {
        let text = "data: one\n\ndata: two\n\n"
        let printed = run(StreamFixtures.eventStreamHead(1) + [StreamFixtures.finish(1, body: text)])
        XCTAssertEqual(printed[2].count, 3, "two events, then the flow: \(printed[2])")
        XCTAssertTrue(printed[2][0].contains("← event") && printed[2][0].contains("one"), printed[2][0])
        XCTAssertTrue(printed[2][1].contains("two"), printed[2][1])
    }

    func testWebSocketMessagesArePrintedAsTheyCome() {
        let printed = run(StreamFixtures.webSocketHead(1) + [
            StreamFixtures.webSocket(1, .request, .text, Data("hi\nthere".utf8), at: 0.5),
            StreamFixtures.webSocket(1, .response, .binary, Data([0xDE, 0xAD]), at: 0.75),
        ])
        XCTAssertEqual(printed[2], ["09:30:01.500 → text  ws://127.0.0.1:8080/chat  +500.0 ms  8 B  hi there  #00000000"])
        XCTAssertEqual(printed[3], ["09:30:01.750 ← binary  ws://127.0.0.1:8080/chat  +750.0 ms  2 B  0xdead  #00000000"])
    }

    func testTheJSONLineCarriesTheFlowAndTheMessage() throws {
        var tap = MessageTap()
        var assembler = FlowAssembler()
        var arrivals: [MessageTap.Arrival] = []
        for event in Fixtures.connection(messages: StreamFixtures.eventStreamHead(1) + [StreamFixtures.part(1, "id: 9\nevent: tick\ndata: 1\n\n", offset: 0, at: 0.5)]) {
            arrivals += tap.apply(event, flowSoFar: assembler.inProgress)
            _ = assembler.apply(event)
        }
        let line = try XCTUnwrap(arrivals.first).jsonLine()
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: line) as? [String: Any])
        XCTAssertEqual(object["flow"] as? String, Fixtures.id(1).description)
        let message = try XCTUnwrap(object["message"] as? [String: Any])
        XCTAssertEqual(message["kind"] as? String, "event")
        XCTAssertEqual(message["event"] as? String, "tick")
        XCTAssertEqual(message["id"] as? String, "9")
        XCTAssertEqual(message["text"] as? String, "1")
        XCTAssertEqual(message["at"] as? Double, 0.5)
    }
}
