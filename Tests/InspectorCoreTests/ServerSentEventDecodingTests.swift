import Foundation
@testable import InspectorCore
import WireProtocol
import XCTest

/// The `text/event-stream` parser follows the WHATWG EventSource rules
/// whatever the parts the body arrived in.
final class ServerSentEventDecodingTests: XCTestCase {
    private func decode(_ text: String) -> [ServerSentEvent] {
        var decoder = ServerSentEventDecoder()
        return decoder.feed(Array(text.utf8), at: nil)
    }

    /// Decodes `bytes` split at `cuts`, each part timed by its index.
    private func decode(_ bytes: [UInt8], cuts: [Int]) -> [ServerSentEvent] {
        var decoder = ServerSentEventDecoder()
        var events: [ServerSentEvent] = []
        var start = 0
        for (index, cut) in (cuts + [bytes.count]).enumerated() {
            events += decoder.feed(bytes[start..<cut], at: Double(index))
            start = cut
        }
        return events
    }

    private func withoutTimes(_ events: [ServerSentEvent]) -> [ServerSentEvent] {
        events.map { var event = $0; event.at = nil; event.gap = nil; return event }
    }

    func testFieldsOfAnEvent() {
        let events = decode("id: 7\nevent: update\ndata: first\ndata:second\nretry: 3000\n\n")
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events[0].id, "7")
        XCTAssertEqual(events[0].type, "update")
        XCTAssertEqual(events[0].data, "first\nsecond", "data lines join with LF; one space after the colon is dropped, none needed")
        XCTAssertEqual(events[0].retry, 3000)
        XCTAssertTrue(events[0].isDispatched)
    }

    func testDefaultTypeValueSpacesAndFieldsWithoutColon() {
        let events = decode("data:  two spaces\n\ndata\n\n")
        XCTAssertEqual(events.map(\.type), ["message", "message"])
        XCTAssertEqual(events.map(\.data), [" two spaces", ""], "only one leading space is dropped; a bare field name has an empty value")
    }

    func testCommentsAndRetryAloneAreReadButNotDispatched() {
        let events = decode(": keep-alive\n\nretry: 10\n\nretry: soon\n\n")
        XCTAssertEqual(events.map(\.isDispatched), [false, false, false])
        XCTAssertEqual(events[0].comments, ["keep-alive"])
        XCTAssertEqual(events[1].retry, 10)
        XCTAssertNil(events[2].retry, "a retry that is not all digits is ignored")
    }

    func testIDCarriesOverAndAnIDWithNULIsIgnored() {
        let events = decode("id: a\ndata: 1\n\ndata: 2\n\nid: b\u{0}c\ndata: 3\n\n")
        XCTAssertEqual(events.map(\.lastEventID), ["a", "a", "a"])
        XCTAssertEqual(events.map(\.id), ["a", nil, nil])
    }

    func testUnknownFieldsAreIgnored() {
        XCTAssertEqual(decode("foo: bar\ndata: x\n\n").map(\.data), ["x"])
    }

    func testLineEndsCRLFAndCRAndLFAreAllOneLineEnd() {
        let lf = withoutTimes(decode("data: a\ndata: b\n\ndata: c\n\n"))
        let crlf = withoutTimes(decode("data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"))
        let cr = withoutTimes(decode("data: a\rdata: b\r\rdata: c\r\r"))
        XCTAssertEqual(lf.map(\.data), ["a\nb", "c"])
        XCTAssertEqual(crlf.map(\.data), lf.map(\.data))
        XCTAssertEqual(cr.map(\.data), lf.map(\.data))
        XCTAssertEqual(crlf.map(\.offset), [0, 20], "each block starts after the blank line that ended the last")
    }

    func testALeadingByteOrderMarkIsSkippedOnlyAtTheStart() {
        let events = decode("\u{FEFF}data: x\n\ndata: \u{FEFF}y\n\n")
        XCTAssertEqual(events.map(\.data), ["x", "\u{FEFF}y"])
    }

    func testDONEIsRecognised() {
        let events = decode("data: {}\n\ndata: [DONE]\n\n")
        XCTAssertEqual(events.map(\.isDone), [false, true])
    }

    func testAnEventUnfinishedWhenTheBytesEndIsNotDispatched() {
        var decoder = ServerSentEventDecoder()
        XCTAssertEqual(decoder.feed(Array("data: whole\n\ndata: half".utf8), at: 1).count, 1)
        XCTAssertTrue(decoder.isMidEvent)
        XCTAssertEqual(decoder.feed(Array("\n".utf8), at: 2).count, 0, "a line ended is not yet an event")
        XCTAssertTrue(decoder.isMidEvent)
    }

    func testEverySplitPointGivesTheSameEvents() {
        let text = "\u{FEFF}: hi\r\nid: 1\r\nevent: delta\r\ndata: {\"t\":\"héllo ✓\"}\r\n\r\ndata: a\rdata: b\r\rretry: 5\n\ndata: [DONE]\n\n"
        let bytes = Array(text.utf8)
        let whole = withoutTimes(decode(bytes, cuts: []))
        XCTAssertEqual(whole.filter(\.isDispatched).map(\.data), ["{\"t\":\"héllo ✓\"}", "a\nb", "[DONE]"])
        for first in 0...bytes.count {
            XCTAssertEqual(withoutTimes(decode(bytes, cuts: [first])), whole, "split at \(first)")
            for second in first...bytes.count where (second - first) % 5 == 1 {
                XCTAssertEqual(withoutTimes(decode(bytes, cuts: [first, second])), whole, "split at \(first) and \(second)")
            }
        }
        XCTAssertEqual(withoutTimes(decode(bytes, cuts: Array(1..<bytes.count))), whole, "one byte at a time")
    }

    func testAnEventIsTimedByThePartThatCompletedIt() {
        let bytes = Array("data: one\n\ndata: two\n\n".utf8)
        // Parts: "data: one\n" (0), "\ndata: t" (1), "wo\n\n" (2).
        let events = decode(bytes, cuts: [10, 18])
        XCTAssertEqual(events.map(\.at), [1, 2])
        XCTAssertEqual(events.map(\.gap), [nil, 1])
    }

    func testAStreamThatEndsMidEventIsCutOff() {
        let body = CapturedBody(data: Data("data: one\n\ndata: tw".utf8))
        let parts = [BodyPartMark(direction: .response, at: 0.5, offset: 0, size: 11), BodyPartMark(direction: .response, at: 0.9, offset: 11, size: 8)]
        XCTAssertEqual(ServerSentEventStream(body: body, parts: parts, state: .completed).ending, .cutOff("the body ended inside an event"))
        XCTAssertEqual(ServerSentEventStream(body: body, parts: parts, state: .responded).ending, .live)
        let whole = CapturedBody(data: Data("data: one\n\n".utf8))
        XCTAssertEqual(ServerSentEventStream(body: whole, parts: Array(parts.prefix(1)), state: .completed).ending, .clean)
        XCTAssertEqual(ServerSentEventStream(body: whole, parts: [], state: .failed).ending, .cutOff("the flow failed"))
    }

    func testBytesPastTheLastPartAreTimedByTheFlowsEnd() {
        // The agent folds the parts still queued when a flow ends into its end: they came before it.
        let body = CapturedBody(data: Data("data: one\n\ndata: two\n\n".utf8))
        let stream = ServerSentEventStream(body: body, parts: [BodyPartMark(direction: .response, at: 0.5, offset: 0, size: 11)],
                                           state: .completed, endedAt: 0.8)
        XCTAssertEqual(stream.events.map(\.at), [0.5, 0.8])
        XCTAssertEqual(stream.events[1].gap ?? 0, 0.3, accuracy: 1e-9)
    }

    func testABodyThatCameWholeIsReadUntimed() {
        let body = CapturedBody(data: Data("data: one\n\ndata: two\n\n".utf8))
        let stream = ServerSentEventStream(body: body, parts: [], state: .completed, endedAt: 0.8)
        XCTAssertEqual(stream.events.map(\.at), [nil, nil], "no part: when each event came is not known")
    }
}
