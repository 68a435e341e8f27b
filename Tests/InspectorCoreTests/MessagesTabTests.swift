import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// The messages tab: a stream's events or messages as they arrive, decoded,
/// the assembled text of a streamed completion, how the stream ended, and
/// following the end while live.
final class MessagesTabTests: XCTestCase {
    private let stream = StreamFixtures.chunk("Hel") + StreamFixtures.chunk("lo, ") + StreamFixtures.chunk("world") + "data: [DONE]\n\n"

    /// The first `count` bytes of the stream, as parts cut mid-line.
    private func liveState(bytes count: Int, size: Size = Size(width: 120, height: 60)) -> AppState {
        let text = String(decoding: Array(stream.utf8).prefix(count), as: UTF8.self)
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1)
            + StreamFixtures.parts(1, text, cuts: [40, min(text.utf8.count, 130)].filter { $0 < text.utf8.count }), size: size)
        state.press("enter", "5")
        return state
    }

    func testEventsShowAsTheirPartsArriveWithTheTextSoFar() throws {
        let upToSecond = StreamFixtures.chunk("Hel").utf8.count + StreamFixtures.chunk("lo, ").utf8.count + 10
        var state = liveState(bytes: upToSecond)
        guard case .detail(let detail) = state.mode else { return XCTFail("not in the detail view") }
        XCTAssertEqual(detail.tab, .messages)
        var screen = state.screen(size: Size(width: 120, height: 60))
        XCTAssertTrue(screen.contains("Server-sent events (2)  ⇣ streaming"), screen)
        XCTAssertTrue(screen.contains("← event 1"), screen)
        XCTAssertTrue(screen.contains("← event 2"), screen)
        XCTAssertFalse(screen.contains("event 3"), "the third event is not whole yet:\n\(screen)")
        XCTAssertTrue(screen.contains("Assembled text  OpenAI chat completions"), screen)
        XCTAssertTrue(screen.contains("\n  Hello,\n"), "the text so far (the screen drops its trailing space):\n\(screen)")
        XCTAssertTrue(screen.contains(#""content": "Hel""#), "each event's JSON indented:\n\(screen)")

        let rest = String(decoding: Array(stream.utf8).dropFirst(upToSecond), as: UTF8.self)
        StreamFixtures.receive(StreamFixtures.parts(1, rest, cuts: [], from: upToSecond, firstAt: 1.5) + [StreamFixtures.finish(1, body: stream)],
                               into: &state)
        screen = state.screen(size: Size(width: 120, height: 80))
        XCTAssertTrue(screen.contains("Server-sent events (4)  ended cleanly"), screen)
        XCTAssertTrue(screen.contains("  Hello, world"), screen)
        XCTAssertTrue(screen.contains("[DONE]: the end of the stream"), screen)
    }

    func testEachEventHasItsTimeGapSizeAndType() throws {
        let text = "event: update\nid: 7\ndata: {\"n\":1}\n\n: keep-alive\n\nretry: 3000\n\nevent: update\ndata: plain words\n\n"
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, text, cuts: [20, 40, 55]) + [StreamFixtures.finish(1, body: text)],
                                         size: Size(width: 120, height: 60))
        state.press("enter", "5")
        let screen = state.screen(size: Size(width: 120, height: 60))
        for expected in ["← event 1", "+750.0 ms", "update", "id 7", #""n": 1"#, ": comment", ": keep-alive", "retry 3000 ms",
                         "← event 2", "Δ500.0 ms", "plain words"] {
            XCTAssertTrue(screen.contains(expected), "\(expected) missing from\n\(screen)")
        }
    }

    func testTheEventsThatCameWithTheFlowsEndHaveItsTime() throws {
        // The last parts were still queued at the agent when the flow ended: its end carries their bytes, without marks.
        let streamed = StreamFixtures.chunk("Hel") + StreamFixtures.chunk("lo, ")
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, streamed, cuts: [])
            + [StreamFixtures.finish(1, body: stream, at: 2.5)], size: Size(width: 120, height: 80))
        state.press("enter", "5")
        let lines = state.screen(size: Size(width: 120, height: 80)).split(separator: "\n")
        let events = lines.filter { $0.contains("← event") }
        XCTAssertEqual(events.count, 4, lines.joined(separator: "\n"))
        for event in events.prefix(2) { XCTAssertTrue(event.contains("+500.0 ms"), String(event)) }
        for event in events.dropFirst(2) { XCTAssertTrue(event.contains("+2.50 s"), String(event)) }
    }

    func testAStreamCutOffIsToldApartFromOneThatEndedCleanly() throws {
        let half = StreamFixtures.chunk("Hel") + "data: {\"obj"
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, half, cuts: [])
            + [StreamFixtures.finish(1, body: half, state: .failed)])
        state.press("enter", "5")
        XCTAssertTrue(state.screen(size: Size(width: 120, height: 40)).contains("cut off: the flow failed"))

        var ended = StreamFixtures.state(StreamFixtures.eventStreamHead(2) + [StreamFixtures.finish(2, body: half)])
        ended.press("enter", "5")
        XCTAssertTrue(ended.screen(size: Size(width: 120, height: 40)).contains("cut off: the body ended inside an event"),
                      "a completed flow whose body stops mid-event")
    }

    func testTheTabFollowsNewEventsUntilScrolledUpAndAgainAtTheBottom() throws {
        let size = Size(width: 100, height: 16)
        var events = ""
        for number in 1...12 { events += "data: tick \(number)\n\n" }
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, events, cuts: []), size: size)
        state.press("enter", "5")
        XCTAssertTrue(state.screen(size: size).contains("tick 12"), "opens at the newest event:\n\(state.screen(size: size))")

        var offset = events.utf8.count
        func add(_ number: Int) {
            let text = "data: tick \(number)\n\n"
            StreamFixtures.receive([StreamFixtures.part(1, text, offset: offset, at: Double(number))], into: &state)
            offset += text.utf8.count
        }
        add(13)
        XCTAssertTrue(state.screen(size: size).contains("tick 13"), "follows:\n\(state.screen(size: size))")

        state.press("k", "k", "k", "k")
        add(14)
        XCTAssertFalse(state.screen(size: size).contains("tick 14"), "scrolled up: stays put:\n\(state.screen(size: size))")
        XCTAssertTrue(state.screen(size: size).contains("tick 11"), state.screen(size: size))

        state.press("G")
        add(15)
        XCTAssertTrue(state.screen(size: size).contains("tick 15"), "at the bottom again: follows:\n\(state.screen(size: size))")
    }

    func testWebSocketMessagesWithDirectionOpcodeAndContent() throws {
        let messages = StreamFixtures.webSocketHead(1) + [
            StreamFixtures.webSocket(1, .request, .text, Data("hello".utf8), at: 0.01),
            StreamFixtures.webSocket(1, .response, .text, Data(#"{"echo":"hello"}"#.utf8), at: 0.02),
            StreamFixtures.webSocket(1, .response, .binary, Data([0x00, 0x01, 0xFF]), at: 0.03),
            StreamFixtures.webSocket(1, .request, .ping, Data(), at: 0.04),
            StreamFixtures.webSocket(1, .response, .pong, Data(), at: 0.05),
            StreamFixtures.webSocket(1, .request, .close, Data("bye".utf8), at: 0.06, closeCode: 1000),
        ]
        var state = StreamFixtures.state(messages, size: Size(width: 120, height: 60))
        state.press("enter", "5")
        let screen = state.screen(size: Size(width: 120, height: 60))
        for expected in ["WebSocket messages (6)", "→ text 1", "hello", "← text 1", #""echo": "hello""#, "← binary 2", "00 01 ff",
                         "→ ping 2", "← pong 3", "→ close 3", "close 1000 “bye”", "closed by the app with 1000 “bye”"] {
            XCTAssertTrue(screen.contains(expected), "\(expected) missing from\n\(screen)")
        }
    }

    func testTheMessagesTabExistsOnlyForStreams() throws {
        var plain = Fixtures.mixedState()
        plain.press("g", "enter", "5")
        XCTAssertEqual(plain.notice?.isError, true)
        XCTAssertFalse(plain.screen().contains("5 Messages"))
        var stream = StreamFixtures.state(StreamFixtures.eventStreamHead(1))
        stream.press("enter")
        XCTAssertTrue(stream.screen().contains("5 Messages"), stream.screen())
    }

    func testSearchFindsTextInTheMessages() throws {
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + [StreamFixtures.finish(1, body: stream)], size: Size(width: 100, height: 12))
        state.press("enter", "5")
        state.enter("world", after: "/")
        guard case .detail(let detail) = state.mode else { return XCTFail("not in the detail view") }
        let lines = state.detailLines(detail).map(\.text)
        XCTAssertTrue(lines[detail.scroll].lowercased().contains("world"), "scrolled to \(lines[detail.scroll])")
    }
}
