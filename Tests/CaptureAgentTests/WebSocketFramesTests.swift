import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// How a connection's frames become the messages its flow records, without
/// I/O: fragments joined, payloads kept up to the limit with their true
/// size, close frames read, and a clean close told from an abrupt one.
final class WebSocketFramesTests: XCTestCase {
    private func frame(_ frames: inout WebSocketFrames, _ direction: StreamDirection, _ opcode: UInt8, fin: Bool = true,
                       _ payload: [UInt8]) -> WebSocketFrames.Complete? {
        let wanted = min(payload.count, frames.wanted(direction, opcode: opcode))
        return payload.withUnsafeBytes { frames.frame(direction, opcode: opcode, fin: fin, size: payload.count,
                                                       payload: UnsafeRawBufferPointer(rebasing: $0.prefix(wanted))) }
    }

    func testFragmentsAreJoinedIntoOneMessageWithControlFramesBetweenThem() {
        var frames = WebSocketFrames(limit: 100)
        XCTAssertNil(frame(&frames, .request, 0x1, fin: false, Array("frag".utf8)))
        let ping = frame(&frames, .request, 0x9, Array("p".utf8))
        XCTAssertEqual(ping, .init(opcode: .ping, body: CapturedBody(data: Data("p".utf8)), closeCode: nil))
        // The other direction's messages are apart.
        XCTAssertEqual(frame(&frames, .response, 0x2, [1, 2])?.opcode, .binary)
        XCTAssertNil(frame(&frames, .request, 0x0, fin: false, Array("mented ".utf8)))
        let message = frame(&frames, .request, 0x0, fin: true, Array("message".utf8))
        XCTAssertEqual(message, .init(opcode: .text, body: CapturedBody(data: Data("fragmented message".utf8)), closeCode: nil))
    }

    func testAMessageKeepsUpToTheLimitAndCountsItsTrueSize() {
        var frames = WebSocketFrames(limit: 5)
        XCTAssertNil(frame(&frames, .response, 0x2, fin: false, [1, 2, 3]))
        XCTAssertEqual(frames.wanted(.response, opcode: 0x0), 2, "only what the message can still keep is read")
        let message = frame(&frames, .response, 0x0, fin: true, [4, 5, 6, 7])
        XCTAssertEqual(message?.body, CapturedBody(data: Data([1, 2, 3, 4, 5]), size: 7, isTruncated: true))
        XCTAssertEqual(frame(&frames, .response, 0x1, Array("123456".utf8))?.body.size, 6)
    }

    func testACloseFrameGivesItsCodeApartAndItsReasonAsTheBody() {
        var frames = WebSocketFrames(limit: 100)
        let close = frame(&frames, .request, 0x8, [0x0F, 0xA0] + Array("bye".utf8))
        XCTAssertEqual(close, .init(opcode: .close, body: CapturedBody(data: Data("bye".utf8)), closeCode: 4000))
        XCTAssertFalse(frames.closedBothWays, "one close is not a handshake")
        let empty = frame(&frames, .response, 0x8, [])
        XCTAssertEqual(empty, .init(opcode: .close, body: CapturedBody(data: Data()), closeCode: nil))
        XCTAssertTrue(frames.closedBothWays)
    }

    func testReservedOpcodesAndAStrayContinuationCompleteNothing() {
        var frames = WebSocketFrames(limit: 100)
        XCTAssertNil(frame(&frames, .request, 0x0, [1]))
        XCTAssertNil(frame(&frames, .request, 0x3, [1]))
        XCTAssertNil(frame(&frames, .request, 0xB, [1]))
        XCTAssertEqual(frame(&frames, .request, 0xA, [])?.opcode, .pong)
    }

    func testAFlowThatKeepsNothingStillTellsMessagesApart() {
        var frames = WebSocketFrames(limit: 0)
        XCTAssertNil(frame(&frames, .request, 0x1, fin: false, [1, 2]))
        XCTAssertEqual(frame(&frames, .request, 0x0, [3])?.body, CapturedBody(data: Data(), size: 3, isTruncated: true))
    }
}
