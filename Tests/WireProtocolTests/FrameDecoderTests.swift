import Foundation
import XCTest
@testable import WireProtocol

final class FrameDecoderTests: XCTestCase {
    func testOneByteAtATime() throws {
        let bytes = try Fixtures.frames(Fixtures.conversation)
        XCTAssertEqual(try MessageDecoder.decodeAll(bytes.indices.map { bytes[$0...$0] }), Fixtures.conversation)
    }

    func testAllFramesInOneBuffer() throws {
        let bytes = try Fixtures.frames(Fixtures.conversation)
        XCTAssertEqual(try MessageDecoder.decodeAll([bytes[...]]), Fixtures.conversation)
    }

    func testEverySplitPointInsideThePrefixAndThePayload() throws {
        let messages = Array(Fixtures.conversation.prefix(3))
        let bytes = try Fixtures.frames(messages)
        for split in 1..<bytes.count {
            XCTAssertEqual(try MessageDecoder.decodeAll([bytes[..<split], bytes[split...]]), messages, "split at byte \(split)")
        }
    }

    func testRandomChunkingAndShuffledOrders() throws {
        var rng = SplitMix64(seed: 0x5EED)
        for round in 0..<50 {
            let shuffled = [Message.hello(Fixtures.hello)] + Fixtures.conversation.dropFirst().shuffled(using: &rng)
            let bytes = try Fixtures.frames(shuffled)
            var chunks: [ArraySlice<UInt8>] = []
            var index = 0
            while index < bytes.count {
                let end = min(bytes.count, index + Int.random(in: 1...97, using: &rng))
                chunks.append(bytes[index..<end])
                index = end
            }
            XCTAssertEqual(try MessageDecoder.decodeAll(chunks), shuffled, "round \(round)")
        }
    }

    func testMaliciousLengthIsRejectedFromThePrefixAlone() throws {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        decoder.append(contentsOf: [UInt8](repeating: 0x41, count: 100_000))
        XCTAssertThrowsError(try decoder.nextFrame()) {
            XCTAssertEqual($0 as? WireError, .frameTooLarge(length: 0xFFFF_FFFF, limit: Wire.defaultMaximumFrameSize))
        }
        XCTAssertEqual(decoder.bufferedByteCount, 0, "nothing after a rejected length prefix may be kept")
    }

    func testLimitIsConfigurableAndInclusive() throws {
        var decoder = FrameDecoder(maximumFrameSize: 8)
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(count: 8)))
        XCTAssertEqual(try decoder.nextFrame()?.count, 8)
        decoder.append(contentsOf: [0, 0, 0, 9])
        XCTAssertThrowsError(try decoder.nextFrame()) {
            XCTAssertEqual($0 as? WireError, .frameTooLarge(length: 9, limit: 8))
        }
    }

    func testFramesBeforeABadLengthAreStillDelivered() throws {
        var decoder = MessageDecoder(maximumFrameSize: 1024)
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello), .status(Fixtures.status)]) + [0x7F, 0, 0, 0])
        XCTAssertEqual(try decoder.next(), .hello(Fixtures.hello))
        XCTAssertEqual(try decoder.next(), .status(Fixtures.status))
        XCTAssertThrowsError(try decoder.next()) {
            guard case .frameTooLarge? = $0 as? WireError else { return XCTFail("\($0)") }
        }
    }

    func testErrorsAreSticky() throws {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: Fixtures.frame(json: "not json"))
        XCTAssertThrowsError(try decoder.next())
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]))
        XCTAssertThrowsError(try decoder.next(), "a stream that was out of step once is never trusted again")
    }

    func testTruncatedStreamIsReportedAtFinish() throws {
        let bytes = try Fixtures.frames([.hello(Fixtures.hello), .status(Fixtures.status)])
        var decoder = MessageDecoder()
        decoder.append(contentsOf: bytes.dropLast(5))
        XCTAssertEqual(try decoder.drain(), [.hello(Fixtures.hello)])
        XCTAssertThrowsError(try decoder.finish()) {
            guard case .truncatedStream(let buffered)? = $0 as? WireError else { return XCTFail("\($0)") }
            XCTAssertEqual(buffered, bytes.count - (try! Fixtures.frames([.hello(Fixtures.hello)])).count - 5)
        }
    }

    func testStreamEndingInsideThePrefixIsTruncated() {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0, 0])
        XCTAssertThrowsError(try decoder.finish()) { XCTAssertEqual($0 as? WireError, .truncatedStream(bufferedBytes: 2)) }
    }

    func testCleanEndOfStream() throws {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]))
        _ = try decoder.drain()
        XCTAssertNoThrow(try decoder.finish())
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    func testGarbageBytesAreAMalformedPayload() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<200 {
            var decoder = MessageDecoder(maximumFrameSize: 4096)
            decoder.append(contentsOf: (0..<Int.random(in: 1...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            do {
                _ = try decoder.drain()
                try decoder.finish()
                XCTFail("random bytes decoded cleanly")
            } catch {
                switch error {
                case .malformedPayload, .frameTooLarge, .truncatedStream: break
                default: XCTFail("unexpected \(error)")
                }
            }
            XCTAssertLessThanOrEqual(decoder.bufferedByteCount, 4096 + 4)
        }
    }

    /// Found by the frames fuzz target: after a malformed payload the
    /// decoder kept buffering whatever came next, without bound.
    func testBytesAfterAFaultAreNotKept() throws {
        var decoder = MessageDecoder(maximumFrameSize: 4096)
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]) + Fixtures.frame(json: "{not json"))
        XCTAssertEqual(try decoder.next(), .hello(Fixtures.hello))
        XCTAssertThrowsError(try decoder.next())
        for _ in 0 ..< 100 { decoder.append(contentsOf: try Fixtures.frames([.status(Fixtures.status)])) }
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        XCTAssertThrowsError(try decoder.next(), "still the same fault")
    }

    func testZeroLengthFrameIsMalformed() {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: [0, 0, 0, 0])
        XCTAssertThrowsError(try decoder.next()) {
            guard case .malformedPayload? = $0 as? WireError else { return XCTFail("\($0)") }
        }
    }

    func testLargeStreamDoesNotKeepConsumedBytes() throws {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]))
        let frame = try Fixtures.frames([.flowStarted(Fixtures.log)])
        for _ in 0..<2_000 {
            decoder.append(contentsOf: frame)
            _ = try decoder.drain()
        }
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }
}

final class MessageDecoderRuleTests: XCTestCase {
    func testUnknownKindIsSkippedAndTheNextFrameStillDecodes() throws {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]))
        decoder.append(contentsOf: Fixtures.frame(json: #"{"type":"flowWebSocketFrame","id":"x","opcode":1}"#))
        decoder.append(contentsOf: try Fixtures.frames([.status(Fixtures.status)]))
        XCTAssertEqual(try decoder.drain(), [.hello(Fixtures.hello), .status(Fixtures.status)])
        XCTAssertEqual(decoder.skippedMessageCount, 1)
    }

    func testUnknownFieldsAreIgnored() throws {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: Fixtures.frame(json: """
            {"type":"hello","protocolVersion":1,"agentName":"a","agentVersion":"9","appName":"x",
             "processID":1,"hostName":"h","compression":"zstd","features":["ws"]}
            """))
        guard case .hello(let hello)? = try decoder.next() else { return XCTFail("no hello") }
        XCTAssertEqual(hello.agentVersion, "9")
        XCTAssertNil(hello.token)
    }

    func testFirstMessageMustBeHello() throws {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.status(Fixtures.status)]))
        XCTAssertThrowsError(try decoder.next()) { XCTAssertEqual($0 as? WireError, .helloExpected(got: "status")) }
    }

    func testUnsupportedProtocolVersion() throws {
        var hello = Fixtures.hello
        hello.protocolVersion = 3
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.hello(hello)]))
        XCTAssertThrowsError(try decoder.next()) {
            XCTAssertEqual($0 as? WireError, .unsupportedProtocolVersion(3, supported: 1...2))
        }
        XCTAssertNil(decoder.hello)
    }

    func testMalformedPayloadsNameTheProblem() {
        let cases: [(String, String)] = [
            ("{not json", "not valid JSON"),
            ("[1,2,3]", "expected"),
            (#"{"kind":"hello"}"#, "missing field 'type'"),
            (#"{"type":42}"#, "expected"),
            (#"{"type":"hello","protocolVersion":1}"#, "missing field 'agentName'"),
            (#"{"type":"flowStarted","flow":{"id":"nope"}}"#, "flow.id"),
        ]
        for (json, expected) in cases {
            var decoder = MessageDecoder()
            decoder.append(contentsOf: Fixtures.frame(json: json))
            XCTAssertThrowsError(try decoder.next(), json) { error in
                guard case .malformedPayload(let reason)? = error as? WireError else { return XCTFail("\(json): \(error)") }
                XCTAssertTrue(reason.contains(expected), "\(json): '\(reason)' should mention '\(expected)'")
            }
        }
    }

    func testInvalidUTF8IsMalformed() {
        var decoder = MessageDecoder()
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data([0x7B, 0xFF, 0xFE, 0x7D])))
        XCTAssertThrowsError(try decoder.next()) {
            guard case .malformedPayload? = $0 as? WireError else { return XCTFail("\($0)") }
        }
    }

    func testErrorDescriptionsArePlainSentences() {
        XCTAssertEqual(WireError.frameTooLarge(length: 10, limit: 5).description,
                       "frame too large: length prefix says 10 bytes, limit is 5")
        XCTAssertTrue(WireError.unsupportedProtocolVersion(3, supported: 1...1).description.contains("3"))
    }

    func testEncoderRefusesFramesAboveItsLimit() {
        var log = Fixtures.log
        log.request.body = CapturedBody(data: Data(count: 2048))
        XCTAssertThrowsError(try FrameEncoder(maximumFrameSize: 1024).encode(.flowStarted(log))) {
            guard case .frameTooLargeToEncode? = $0 as? WireError else { return XCTFail("\($0)") }
        }
    }
}

/// A small deterministic generator so shuffles and random bytes reproduce.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
