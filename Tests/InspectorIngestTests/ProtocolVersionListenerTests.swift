import Foundation
import InspectorIngest
import WireProtocol
import XCTest

/// The real listener on real sockets against agents of both generations:
/// one that offers version 2 is asked for it before its first receipt and
/// may then mix version-2 frames in; one that predates it (the version-1
/// golden conversation, byte for byte) is never asked and reads as before.
final class ProtocolVersionListenerTests: ListenerTestCase {
    private let goldenURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../WireProtocolTests/Golden/conversation.jsonl")

    private func offering(_ version: Int?) -> Hello {
        var hello = ListenerTesting.hello()
        hello.highestProtocolVersion = version
        return hello
    }

    func testAnAgentOfferingVersion2IsAskedForItBeforeItsFirstReceipt() throws {
        _ = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(offering(2)))
        let messages = try agent.viewerMessages { $0.contains(.receipt(Receipt(events: 0))) }
        XCTAssertEqual(messages, [.useProtocolVersion(2), .receipt(Receipt(events: 0))])
    }

    func testAnAgentOfferingALaterVersionIsAskedForTheHighestThisViewerReads() throws {
        _ = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(offering(7)))
        let messages = try agent.viewerMessages { $0.contains(.receipt(Receipt(events: 0))) }
        XCTAssertEqual(messages.first, .useProtocolVersion(Wire.highestProtocolVersion))
    }

    /// An agent built before version 2: the golden version-1 payloads as
    /// they are, on one connection. Every message arrives, and the viewer
    /// sends it nothing but receipts.
    func testAVersion1AgentIsNeverAskedAndEveryGoldenMessageArrives() throws {
        let (_, inbox, _) = try startListener()
        let lines = try String(contentsOf: goldenURL, encoding: .utf8).split(separator: "\n")
        let agent = try TestAgent(unix: socketPath())
        for line in lines { try agent.send(FrameEncoder.frame(payload: Data(line.utf8))) }
        let events = inbox.collect(count: lines.count)
        XCTAssertEqual(events.count, lines.count)
        guard case .connected(let id, let hello, _)? = events.first else { return XCTFail("\(events)") }
        XCTAssertNil(hello.highestProtocolVersion)
        let expected = try lines.dropFirst().map { try XCTUnwrap(Message.decode(payload: Data($0.utf8))) }
        XCTAssertEqual(Array(events.dropFirst()), expected.map { InboxEvent.message(id, $0) })
        // A protocol message would come before the first receipt.
        let sent = try agent.viewerMessages { $0.contains(.receipt(Receipt(events: 0))) }
        XCTAssertEqual(sent.first, .receipt(Receipt(events: 0)), "receipts only, as a version-1 agent expects")
    }

    func testVersion2FramesAfterTheSwitchArriveWithTheirBodies() throws {
        let (_, inbox, _) = try startListener()
        let agent = try TestAgent(unix: socketPath())
        try agent.send(.hello(offering(2)))
        let body = Data((0 ..< 300).map { UInt8(truncatingIfNeeded: $0) })
        let flows = (0 ..< 4).map { index in
            NetworkLog(request: Request(method: "POST", url: "https://example.com/\(index)",
                                        body: CapturedBody(data: body, size: body.count, isTruncated: false)),
                       timing: Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000)))
        }
        for (index, flow) in flows.enumerated() {
            try agent.send(try FrameEncoder().encode(.flowStarted(flow), version: index == 0 ? 1 : 2))
        }
        let events = inbox.collect(count: 5)
        guard case .connected(let id, _, _)? = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(Array(events.dropFirst()), flows.map { InboxEvent.message(id, .flowStarted($0)) })
    }
}
