import Foundation
import XCTest
import WireProtocol

/// docs/PROTOCOL.md is what another team implements from; its examples must
/// be messages this implementation accepts.
final class ProtocolDocumentTests: XCTestCase {
    private func jsonExamples() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
    }

    func testEveryJSONExampleDecodesToAMessage() throws {
        let examples = try jsonExamples()
        XCTAssertEqual(examples.count, Message.Kind.allCases.count + 1, "one example per message kind, and one for §4's optional members")
        var kinds: Set<String> = []
        for example in examples {
            let message = try XCTUnwrap(try Message.decode(payload: Data(example.utf8)), example)
            kinds.insert(message.kind)
        }
        XCTAssertEqual(kinds, Set(Message.Kind.allCases.map(\.rawValue)))
    }

    func testTheOptionalMembersExampleReadsAsDocumented() throws {
        let example = try XCTUnwrap(try jsonExamples().first { $0.contains("\"phases\"") })
        XCTAssertEqual(try Message.decode(payload: Data(example.utf8)), .flowFinished(Fixtures.sourcedFinished))
    }

    func testTheReceiptExampleDecodesToAReceipt() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let examples = text.components(separatedBy: "```json-receipt\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        XCTAssertEqual(examples.count, 1)
        var decoder = ReceiptDecoder()
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(try XCTUnwrap(examples.first).utf8)))
        XCTAssertEqual(try decoder.next(), Receipt(events: 1234))
        XCTAssertEqual(Receipt(events: 1234).frame(), FrameEncoder.frame(payload: Data(try XCTUnwrap(examples.first).utf8)), "written as documented")
    }

    func testFrameExampleMatchesTheEncoder() {
        let frame = FrameEncoder.frame(payload: Data(#"{"type":"status","droppedEvents":0,"queuedEvents":0}"#.utf8))
        XCTAssertEqual(Array(frame.prefix(8)), [0x00, 0x00, 0x00, 0x34, 0x7B, 0x22, 0x74, 0x79])
    }
}
