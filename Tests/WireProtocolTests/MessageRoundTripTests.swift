import Foundation
import XCTest
@testable import WireProtocol

final class MessageRoundTripTests: XCTestCase {
    private func roundTrip(_ message: Message, file: StaticString = #filePath, line: UInt = #line) throws {
        var decoder = MessageDecoder()
        if case .hello = message {} else { decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)])) }
        decoder.append(contentsOf: try FrameEncoder().encode(message))
        var decoded = try decoder.drain()
        if case .hello = message {} else { decoded.removeFirst() }
        XCTAssertEqual(decoded, [message], file: file, line: line)
    }

    func testEveryKindRoundTrips() throws {
        for message in Fixtures.conversation { try roundTrip(message) }
        XCTAssertEqual(Set(Fixtures.conversation.map(\.kind)), Set(Message.Kind.allCases.map(\.rawValue)),
                       "the fixture conversation must cover every message kind")
    }

    func testBinaryBodyKeepsEveryByteValue() throws {
        var log = Fixtures.log
        log.request.body = CapturedBody(data: Data((0...255).map(UInt8.init)))
        try roundTrip(.flowStarted(log))
    }

    func testEmptyBodyIsDistinctFromNoBody() throws {
        var empty = Fixtures.log
        empty.request.body = CapturedBody(data: Data())
        var none = Fixtures.log
        none.request.body = nil
        try roundTrip(.flowStarted(empty))
        try roundTrip(.flowStarted(none))
        XCTAssertNotEqual(empty, none)
    }

    func testCustomAndLowercaseMethodsSurviveVerbatim() throws {
        for method in ["OPTIONS", "PROPFIND", "MKCOL", "purge", "X-CUSTOM-VERB"] {
            var log = Fixtures.log
            log.request.method = method
            try roundTrip(.flowStarted(log))
        }
    }

    func testDuplicateAndNonASCIIHeadersKeepOrder() throws {
        let payload = FrameEncoder().payload(.flowStarted(Fixtures.log))
        guard case .flowStarted(let decoded)? = try Message.decode(payload: payload) else { return XCTFail("not a flowStarted") }
        XCTAssertEqual(decoded.request.headers.map(\.name), ["Accept", "X-Trace", "X-Trace", "X-Name"])
        XCTAssertEqual(decoded.request.headers.values(for: "x-trace"), ["a", "b"])
        XCTAssertEqual(decoded.request.headers.first("X-NAME"), "Zoë 東京 🚀")
    }

    func testEveryFlowStateRoundTrips() throws {
        for state in FlowState.allCases {
            var event = Fixtures.flowFinished
            event.state = state
            try roundTrip(.flowFinished(event))
        }
    }

    func testPayloadIsUTF8JSONObjectWithType() throws {
        for message in Fixtures.conversation {
            let payload = FrameEncoder().payload(message)
            XCTAssertNotNil(String(data: payload, encoding: .utf8))
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: payload) as? [String: Any])
            XCTAssertEqual(object["type"] as? String, message.kind)
        }
    }

    func testBodyTravelsAsBase64() throws {
        let payload = FrameEncoder().payload(.flowStarted(Fixtures.log))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let body = try XCTUnwrap(((object["flow"] as? [String: Any])?["request"] as? [String: Any])?["body"] as? [String: Any])
        XCTAssertEqual(body["base64"] as? String, Data([0x00, 0xFF, 0x7B, 0x22, 0x0A, 0x80]).base64EncodedString())
        XCTAssertEqual(body["size"] as? Int, 6)
        XCTAssertEqual(body["truncated"] as? Bool, false)
    }

    func testApplyFoldsEventsIntoTheFlow() {
        var log = Fixtures.log
        log.apply(Fixtures.flowResponse)
        XCTAssertEqual(log.state, .responded)
        XCTAssertEqual(log.response?.statusCode, 207)
        XCTAssertEqual(log.redirects.count, 1)
        log.apply(Fixtures.flowFinished)
        XCTAssertEqual(log.state, .completed)
        XCTAssertEqual(log.response?.body?.size, 5_000_000)
        XCTAssertEqual(log.request.body?.size, 0, "a requestBody in flowFinished replaces the request's body")
        XCTAssertEqual(log.timing.duration, 0.5)
    }

    func testLateResponseDoesNotReopenAFinishedFlow() {
        var log = Fixtures.log
        log.apply(Fixtures.flowFinished)
        log.apply(Fixtures.flowResponse)
        XCTAssertEqual(log.state, .completed)
    }

    func testCapturingCapsTheBodyAndKeepsFullSize() {
        let body = CapturedBody(capturing: Data(repeating: 7, count: 100), cap: 10)
        XCTAssertEqual(body.data.count, 10)
        XCTAssertEqual(body.size, 100)
        XCTAssertTrue(body.isTruncated)
        let small = CapturedBody(capturing: Data(repeating: 7, count: 10), cap: 10)
        XCTAssertFalse(small.isTruncated)
        XCTAssertEqual(small.size, 10)
    }
}

final class TimingTests: XCTestCase {
    func testOffsetsAreClampedNonNegativeAndOrdered() {
        let timing = Timing(startedAt: Fixtures.started, requestSent: -1, firstResponseByte: 0.2, finished: 0.1)
        XCTAssertEqual(timing.requestSent, 0)
        XCTAssertEqual(timing.firstResponseByte, 0.2)
        XCTAssertEqual(timing.finished, 0.2, "finished cannot precede the first response byte")
    }

    func testNonFiniteOffsetsBecomeZero() {
        let timing = Timing(startedAt: Fixtures.started, requestSent: .nan, firstResponseByte: .infinity)
        XCTAssertEqual(timing.requestSent, 0)
        XCTAssertEqual(timing.firstResponseByte, 0)
    }

    func testDerivedDurations() throws {
        let timing = Timing(startedAt: Fixtures.started, requestSent: 0.01, firstResponseByte: 0.11, finished: 0.31)
        XCTAssertEqual(try XCTUnwrap(timing.waiting), 0.10, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(timing.receiving), 0.20, accuracy: 1e-9)
        XCTAssertEqual(timing.duration, 0.31)
        XCTAssertEqual(timing.date(at: 1).timeIntervalSince(Fixtures.started), 1, accuracy: 1e-6)
    }

    func testDurationsStayNonNegativeAfterAssignment() {
        var timing = Timing(startedAt: Fixtures.started, requestSent: 0.5, firstResponseByte: 0.6, finished: 0.7)
        timing.firstResponseByte = 0.1
        timing.finished = -3
        XCTAssertEqual(timing.waiting, 0)
        XCTAssertEqual(timing.receiving, 0)
        XCTAssertEqual(timing.duration, 0)
    }

    func testSubMillisecondPrecisionSurvivesTheWire() throws {
        let timing = Timing(startedAt: Fixtures.started, requestSent: 0.000_123, firstResponseByte: 0.000_456)
        let log = NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1/"), timing: timing)
        let decoded = try NetworkLog(jsonLine: log.jsonLine()).timing
        XCTAssertEqual(decoded.requestSent, 0.000_123)
        XCTAssertEqual(decoded.startedAt.timeIntervalSince1970, Fixtures.started.timeIntervalSince1970, accuracy: 1e-6)
    }
}
