import Foundation
import XCTest
@testable import WireProtocol

/// Version 2: bodies as raw bytes in length-prefixed sections after the
/// JSON (`SectionedPayload`), read by the same decoder as version 1, frame
/// by frame. `Golden/conversation-v2.bin` pins the layout as
/// `Golden/conversation.jsonl` pins version 1's JSON.
///
/// To re-record after a deliberate change: `NETINSPECT_RECORD_GOLDEN=1 swift test --filter ProtocolVersion2Tests`.
final class ProtocolVersion2Tests: XCTestCase {
    private let goldenURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden/conversation-v2.bin")

    private func frames(_ messages: [Message], version: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for message in messages { try FrameEncoder().encode(message, version: version, appendingTo: &bytes) }
        return bytes
    }

    /// One payload with `json` and the given sections, framed.
    private func frame(json: String, sections: [[UInt8]], jsonLength: UInt32? = nil) -> [UInt8] {
        var payload: [UInt8] = [0x02]
        payload += bigEndian(jsonLength ?? UInt32(json.utf8.count))
        payload += Array(json.utf8)
        for section in sections { payload += bigEndian(UInt32(section.count)) + section }
        return bigEndian(UInt32(payload.count)) + payload
    }

    private func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private func assertMalformed(_ bytes: [UInt8], containing text: String, file: StaticString = #filePath, line: UInt = #line) {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try! FrameEncoder().encode(.hello(Fixtures.hello)))
        decoder.append(contentsOf: bytes)
        XCTAssertEqual(try decoder.next(), .hello(Fixtures.hello), file: file, line: line)
        XCTAssertThrowsError(try decoder.next(), file: file, line: line) { error in
            guard case .malformedPayload(let reason)? = error as? WireError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertTrue(reason.contains(text), reason, file: file, line: line)
        }
    }

    func testEveryMessageKindRoundTripsThroughVersion2() throws {
        XCTAssertEqual(try MessageDecoder.decodeAll([try frames(Fixtures.conversation, version: 2)[...]]), Fixtures.conversation)
    }

    func testBodiesTravelAsRawBytesNotBase64() throws {
        let bytes = try FrameEncoder().encode(.flowStarted(Fixtures.log), version: 2)
        let body = Fixtures.request.body!.data
        XCTAssertEqual(bytes[4], 0x02, "a version-2 payload starts with 0x02")
        XCTAssertNotNil(bytes.firstRange(of: body), "the body's own bytes are in the frame")
        XCTAssertNil(String(decoding: bytes, as: UTF8.self).range(of: "base64"))
        XCTAssertEqual(Array(bytes.suffix(body.count + 4)), bigEndian(UInt32(body.count)) + Array(body), "the body is the last section")
    }

    func testOneByteAtATime() throws {
        let bytes = try frames(Fixtures.conversation, version: 2)
        XCTAssertEqual(try MessageDecoder.decodeAll(bytes.indices.map { bytes[$0...$0] }), Fixtures.conversation)
    }

    func testVersion1AndVersion2FramesMixInOneStream() throws {
        var bytes: [UInt8] = []
        for (position, message) in Fixtures.conversation.enumerated() {
            try FrameEncoder().encode(message, version: position.isMultiple(of: 2) ? 1 : 2, appendingTo: &bytes)
        }
        var rng = SplitMix64(seed: 24)
        var chunks: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + Int(rng.next() % 97) + 1)
            chunks.append(bytes[offset ..< end])
            offset = end
        }
        XCTAssertEqual(try MessageDecoder.decodeAll(chunks), Fixtures.conversation)
    }

    func testASectionIsReadByItsNumberWhateverTheOrder() throws {
        let json = #"{"type":"grpcMessage","id":"6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B","message":{"direction":"request","at":0.5,"#
            + #""body":{"section":1,"size":2,"truncated":false}}}"#
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try FrameEncoder().encode(.hello(Fixtures.hello)))
        decoder.append(contentsOf: frame(json: json, sections: [[9, 9, 9], [0xCA, 0xFE]]))
        _ = try decoder.next()
        guard case .grpcMessage(let event)? = try decoder.next() else { return XCTFail("no gRPC message") }
        XCTAssertEqual(event.message.body.data, Data([0xCA, 0xFE]))
    }

    func testMaliciousLengthsAreMalformedPayloads() {
        let json = #"{"type":"status","droppedEvents":0,"queuedEvents":0}"#
        assertMalformed(frame(json: json, sections: [], jsonLength: 0xFFFF_FFFF), containing: "JSON length 4294967295 runs past")
        var overlong = frame(json: json, sections: [[1, 2, 3]])
        overlong.replaceSubrange(overlong.count - 7 ..< overlong.count - 3, with: bigEndian(0xFFFF_FFF0))
        assertMalformed(overlong, containing: "body section 0 length 4294967280 runs past")
        var partial = frame(json: json, sections: [])
        partial += [0, 0]
        partial.replaceSubrange(0 ..< 4, with: bigEndian(UInt32(partial.count - 4)))
        assertMalformed(partial, containing: "body section 0 has a partial length")
        assertMalformed([0, 0, 0, 3, 0x02, 0, 0], containing: "shorter than its 5-byte header")
    }

    func testABodyNamingAMissingSectionIsMalformed() {
        let json = #"{"type":"grpcMessage","id":"6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B","message":{"direction":"request","at":0.5,"#
            + #""body":{"section":2,"size":2,"truncated":false}}}"#
        assertMalformed(frame(json: json, sections: [[1]]), containing: "message.body.section: no body section 2 in this frame")
    }

    func testTheHelloOffersVersion2AndOlderHellosOfferNothing() throws {
        var hello = Fixtures.hello
        hello.highestProtocolVersion = 2
        let encoded = try FrameEncoder().encode(.hello(hello))
        XCTAssertTrue(String(decoding: encoded, as: UTF8.self).contains(#""highestProtocolVersion":2"#))
        XCTAssertEqual(try Message.decode(payload: encoded.dropFirst(4)), .hello(hello))
        XCTAssertNil(Fixtures.hello.highestProtocolVersion)
        XCTAssertEqual(Wire.supportedVersions, 1...2)
    }

    func testTheViewerAnswersWithTheVersionItReads() throws {
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1024, acceptsRules: false)
        decoder.append(contentsOf: ViewerMessage.useProtocolVersion(2).frame())
        decoder.append(contentsOf: Receipt(events: 0).frame())
        XCTAssertEqual(try decoder.next(), .useProtocolVersion(2))
        XCTAssertEqual(try decoder.next(), .receipt(Receipt(events: 0)))
        var receipts = ReceiptDecoder()
        receipts.append(contentsOf: ViewerMessage.useProtocolVersion(2).frame())
        receipts.append(contentsOf: Receipt(events: 3).frame())
        XCTAssertEqual(try receipts.next(), Receipt(events: 3), "an agent reading only receipts skips it, as older agents do")
    }

    /// docs/PROTOCOL.md §2.1 shows a `grpcMessage` frame byte by byte.
    func testTheDocumentedExampleFrameIsWhatTheEncoderWrites() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        func hexBytes(_ line: Substring) -> [UInt8] {
            line.split(separator: " ").prefix { $0.count == 2 && UInt8($0, radix: 16) != nil }.compactMap { UInt8($0, radix: 16) }
        }
        let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("00 00 00") && $0.contains("N = ") })
        let section = try XCTUnwrap(lines.first { $0.hasPrefix("00 00 00") && $0.contains("section 0") })
        let documented = hexBytes(lines[header]) + hexBytes(lines[header + 1]) + hexBytes(section)
        let event = GRPCMessageEvent(id: Fixtures.flowID, message: GRPCMessage(
            direction: .request, at: 0.5, body: CapturedBody(data: Data([0xCA, 0xFE]), size: 2, isTruncated: false)))
        let frame = Array(try FrameEncoder().encode(.grpcMessage(event), version: 2))
        XCTAssertEqual(Array(frame.prefix(9)) + Array(frame.suffix(6)), documented)
    }

    // MARK: - Golden

    func testRecordIfAsked() throws {
        guard ProcessInfo.processInfo.environment["NETINSPECT_RECORD_GOLDEN"] == "1" else {
            throw XCTSkip("set NETINSPECT_RECORD_GOLDEN=1 to re-record the golden file")
        }
        try Data(try frames(Fixtures.conversation, version: 2)).write(to: goldenURL)
    }

    func testGoldenFileDecodesToTheFixtures() throws {
        let golden = try Data(contentsOf: goldenURL)
        XCTAssertEqual(try MessageDecoder.decodeAll([Array(golden)[...]]), Fixtures.conversation)
    }

    func testFixturesEncodeToTheGoldenBytes() throws {
        let golden = try Data(contentsOf: goldenURL)
        XCTAssertEqual(Data(try frames(Fixtures.conversation, version: 2)), golden,
                       "version 2 no longer encodes as the golden file says")
    }
}
