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
        XCTAssertEqual(examples.count, Message.Kind.allCases.count, "one example per message kind")
        var kinds: Set<String> = []
        for example in examples {
            let message = try XCTUnwrap(try Message.decode(payload: Data(example.utf8)), example)
            kinds.insert(message.kind)
        }
        XCTAssertEqual(kinds, Set(Message.Kind.allCases.map(\.rawValue)))
    }

    func testFrameExampleMatchesTheEncoder() {
        let frame = FrameEncoder.frame(payload: Data(#"{"type":"status","droppedEvents":0,"queuedEvents":0}"#.utf8))
        XCTAssertEqual(Array(frame.prefix(8)), [0x00, 0x00, 0x00, 0x34, 0x7B, 0x22, 0x74, 0x79])
    }
}
