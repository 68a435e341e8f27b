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

    func testTheRulesExampleDecodesToTheRulesItDescribes() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let examples = text.components(separatedBy: "```json-rules\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        XCTAssertEqual(examples.count, 1)
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(try XCTUnwrap(examples.first).utf8)))
        var local = TrafficRule(kind: .mapLocal, pattern: "example.com/static", replacement: "./static")
        local.files = [TrafficRule.LocalFile(path: "a/b.json", contentType: "application/json", data: Data([0, 1, 0xFF, 0x7B]))]
        XCTAssertEqual(try decoder.next(), .rules([
            TrafficRule(kind: .mapRemote, filter: "~m GET", pattern: #"api\.example\.com"#, replacement: "127.0.0.1:8080"),
            local,
            TrafficRule(kind: .modifyHeaders, pattern: "X-Name", replacement: "Zoë 東京"),
            TrafficRule(kind: .condition, filter: "~d api", pattern: "latency=300ms fail=5%:reset", replacement: ""),
        ]))
    }

    func testTheServerReplayExamplesDecodeToABookAndAStop() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let example = try XCTUnwrap(text.components(separatedBy: "```json-server-replay\n").dropFirst().first?.components(separatedBy: "\n```").first)
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        for line in example.split(separator: "\n") { decoder.append(contentsOf: FrameEncoder.frame(payload: Data(line.utf8))) }
        var options = ServerReplayOptions()
        options.ignoreParams = ["ts"]
        options.extra = .notFound
        let entry = ServerReplayEntry(
            key: ServerReplayKey(method: "GET", url: "http://127.0.0.1:8080/text", headers: [], body: nil, options: options)!,
            recordedID: FlowID("9776D13A-5A75-4808-98B6-5F0E83B529C8"),
            response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/plain")], body: CapturedBody(data: Data("hi".utf8))),
            wait: 0.0058)
        XCTAssertEqual(try decoder.next(), .serverReplay(ServerReplayBook(options: options, entries: [entry])),
                       "the documented key is the key of GET http://127.0.0.1:8080/text")
        XCTAssertEqual(try decoder.next(), .serverReplay(nil))
    }

    func testTheReplayExampleDecodesToAReplay() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let examples = text.components(separatedBy: "```json-replay\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        XCTAssertEqual(examples.count, 1)
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(try XCTUnwrap(examples.first).utf8)))
        XCTAssertEqual(try decoder.next(), .replay(Fixtures.flowID))
    }

    func testTheComposeExampleDecodesToACompose() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let examples = text.components(separatedBy: "```json-compose\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        XCTAssertEqual(examples.count, 1)
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(try XCTUnwrap(examples.first).utf8)))
        XCTAssertEqual(try decoder.next(), .compose(through: Fixtures.flowID, Request(
            method: "GET", url: "https://api.example.com/v1/health", headers: [HTTPHeader(name: "Accept", value: "application/json")])))
    }

    func testTheBreakpointExamplesDecodeToViewerMessages() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let examples = text.components(separatedBy: "```json-viewer\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        XCTAssertEqual(examples.count, 3)
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        for example in examples { decoder.append(contentsOf: FrameEncoder.frame(payload: Data(example.utf8))) }
        let id = try XCTUnwrap(FlowID("00000000-0000-4000-8000-000000000001"))
        XCTAssertEqual(try decoder.next(), .intercept("~d api.example.com & ~m POST"))
        XCTAssertEqual(try decoder.next(), .resume(FlowResume(id: id, request: Request(
            method: "POST", url: "https://api.example.com/v1/orders", headers: [HTTPHeader(name: "Authorization", value: "<redacted>")],
            body: CapturedBody(data: Data("{}".utf8))))))
        XCTAssertEqual(try decoder.next(), .kill(id))
        XCTAssertNil(try decoder.next())
    }

    func testEveryViewerMessageSurvivesItsFrame() throws {
        let id = FlowID()
        let messages: [ViewerMessage] = [
            .intercept("~u /a"), .intercept(nil), .kill(id), .resume(FlowResume(id: id)),
            .resume(FlowResume(id: id, response: Response(statusCode: 201, headers: [HTTPHeader(name: "A", value: "b")],
                                                          body: CapturedBody(data: Data([0, 1]))))),
            .editedReplay(id, Request(method: "PUT", url: "http://h/x", headers: [])), .replay(id),
            .compose(through: id, Request(method: "POST", url: "http://h/new", headers: [], body: CapturedBody(data: Data("a".utf8)))),
        ]
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        for message in messages { decoder.append(contentsOf: message.frame()) }
        for message in messages { XCTAssertEqual(try decoder.next(), message) }
        var closed = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: false)
        for message in messages { closed.append(contentsOf: message.frame()) }
        XCTAssertNil(try closed.next(), "an agent without control skips every one")
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
