import Foundation
import XCTest
import WireProtocol

/// Pins the version-1 wire format: `Golden/conversation.jsonl` holds one
/// payload per line for `Fixtures.conversation`. A change that alters what is
/// written or how it is read fails here, and must be a deliberate protocol
/// change (docs/PROTOCOL.md, and a version bump if older peers would misread it).
///
/// To re-record after a deliberate change: `NETINSPECT_RECORD_GOLDEN=1 swift test --filter GoldenWireFormatTests`.
final class GoldenWireFormatTests: XCTestCase {
    private let goldenURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden/conversation.jsonl")

    private func goldenLines() throws -> [String] {
        try String(contentsOf: goldenURL, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    func testRecordIfAsked() throws {
        guard ProcessInfo.processInfo.environment["NETINSPECT_RECORD_GOLDEN"] == "1" else {
            throw XCTSkip("set NETINSPECT_RECORD_GOLDEN=1 to re-record the golden file")
        }
        let lines = Fixtures.conversation.map { String(decoding: FrameEncoder().payload($0), as: UTF8.self) }
        try (lines.joined(separator: "\n") + "\n").write(to: goldenURL, atomically: true, encoding: .utf8)
    }

    func testGoldenFileDecodesToTheFixtures() throws {
        let lines = try goldenLines()
        XCTAssertEqual(lines.count, Fixtures.conversation.count)
        for (line, expected) in zip(lines, Fixtures.conversation) {
            XCTAssertEqual(try Message.decode(payload: Data(line.utf8)), expected, line)
        }
    }

    func testFixturesEncodeToTheGoldenJSON() throws {
        for (line, message) in zip(try goldenLines(), Fixtures.conversation) {
            let golden = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary
            let encoded = try JSONSerialization.jsonObject(with: FrameEncoder().payload(message)) as? NSDictionary
            XCTAssertNotNil(golden)
            XCTAssertEqual(encoded, golden, "\(message.kind) no longer encodes as the golden file says")
        }
    }

    func testGoldenFramesDecodeAsOneStream() throws {
        var decoder = MessageDecoder()
        for line in try goldenLines() { decoder.append(contentsOf: FrameEncoder.frame(payload: Data(line.utf8))) }
        XCTAssertEqual(try decoder.drain(), Fixtures.conversation)
    }
}
