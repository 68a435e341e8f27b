// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Which bytes become `bodyPart` events (``FlowRecorder/bodyPart(_:bytes:offset:)``),
/// through a real agent, a real AsyncHTTPClient (both APIs) and a viewer
/// on a real socket: a body read in pieces travels in parts, bounded by
/// the capture limit; a quick answer of declared length makes none and
/// costs what it did before parts; a version-1 viewer never gets a part.
final class BodyPartRuleTests: AgentTestCase, @unchecked Sendable {
    /// Small enough that a dripped body passes it.
    static let captureLimit = 2500

    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.bodyCaptureLimit = Self.captureLimit
    }

    /// What `/drip/5` sends: five chunks of the same 1 KiB.
    private let dripped = Array([[UInt8]](repeating: TestHTTPServer.pattern(count: 1024), count: 5).joined())

    /// Asks for version 2, as netinspect does, and waits until the agent writes it.
    private func viewerReadsVersion2() {
        inspector.write(ViewerMessage.useProtocolVersion(2).frame(), toConnection: inspector.latestConnection())
        XCTAssertTrue(eventually { agent.streamsBodyParts }, "the agent never switched to version 2")
    }

    private func captured() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        agent.capture(&configuration)
        return configuration
    }

    /// Every message the viewer got about the flow whose URL ends with `suffix`.
    private func messages(of suffix: String) -> [Message] {
        guard let id = inspector.flows.values.first(where: { $0.request.url.hasSuffix(suffix) })?.id else { return [] }
        return inspector.allMessages.filter { $0.flowID == id }
    }

    private func parts(of suffix: String) -> [BodyPart] {
        messages(of: suffix).compactMap { if case .bodyPart(let event) = $0 { event.part } else { nil } }
    }

    func testADripFedBodyTravelsInPartsBoundedByTheCaptureLimit() async {
        viewerReadsVersion2()
        for api in AHCAPI.allCases {
            let suffix = "/drip/5?api=\(api)"
            let outcome = await performAHC(AHCRequest(url: server.url(suffix).absoluteString), api: api, configuration: captured())
            XCTAssertEqual(outcome.body.count, 5 * 1024, "\(api)")
            XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: suffix).count == 1 }, "\(api)")
            // Parts that went as their own message (the first may have folded into the start, the last into the end).
            let parts = parts(of: suffix)
            XCTAssertFalse(parts.isEmpty, "\(api): a body that came in pieces over time travels in parts")
            XCTAssertEqual(parts.map(\.direction), parts.map { _ in .response })
            for part in parts {
                let kept = max(0, min(part.body.size, Self.captureLimit - part.offset))
                XCTAssertEqual(part.body.data.count, kept, "\(api): bytes kept within the capture limit, at offset \(part.offset)")
                XCTAssertEqual(part.body.size, 1024, "\(api): the true size, kept or not")
                XCTAssertEqual(part.body.data, Data(dripped[part.offset ..< part.offset + kept]), "\(api)")
            }
            let flow = inspector.finishedFlows(urlSuffix: suffix).first
            XCTAssertEqual(flow?.response?.body?.size, 5 * 1024, "\(api): the true size counted")
            XCTAssertEqual(flow?.response?.body?.data, Data(dripped.prefix(Self.captureLimit)), "\(api)")
            // Every part's time, folded or not, each starting where the one before ended.
            let marks = flow?.parts?.marks ?? []
            XCTAssertGreaterThanOrEqual(marks.count, parts.count, "\(api)")
            XCTAssertEqual(marks.map(\.offset), marks.indices.map { $0 * 1024 }, "\(api)")
            XCTAssertEqual(marks.map(\.at), marks.map(\.at).sorted(), "\(api)")
        }
    }

    /// The viewer answers the hello within a round trip, so an app's first
    /// request may start before it reads version 2: that flow's body still
    /// streams, from the switch on, instead of arriving whole at its end,
    /// and its first part carries the bytes that went by before the switch
    /// (a stream that was the app's first request showed "0 B of 631 B"
    /// and no events: every part began past a gap).
    func testAFlowThatStartedBeforeTheSwitchToVersion2StreamsFromTheSwitchOn() async {
        let suffix = "/drip/40?started=before-the-switch"
        let configuration = captured()
        let request = Task { await performAHC(AHCRequest(url: server.url(suffix).absoluteString), api: .async, configuration: configuration) }
        XCTAssertTrue(eventually { messages(of: suffix).contains { if case .flowResponse = $0 { true } else { false } } },
                      "the flow started and its head arrived before the switch")
        // Some of the 50 ms chunks go by before the switch: the server has
        // written three (a part that carries them shows they were not lost).
        let dripping = await waitUntil { self.server.chunksDripped >= 3 }
        XCTAssertTrue(dripping, "the server never dripped three chunks")
        viewerReadsVersion2()
        let outcome = await request.value
        XCTAssertEqual(outcome.body.count, 40 * 1024)
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: suffix).count == 1 })
        let parts = parts(of: suffix)
        XCTAssertFalse(parts.isEmpty, "the pieces after the switch travel as parts")
        XCTAssertEqual(parts.first?.offset, 0, "the first part starts at the body's first byte, not past a gap")
        for (before, after) in zip(parts, parts.dropFirst()) {
            XCTAssertEqual(after.offset, before.offset + before.body.size, "each part starts where the one before ended")
        }
    }

    func testAQuickAnswerOfDeclaredLengthMakesNoPart() async {
        viewerReadsVersion2()
        for api in AHCAPI.allCases {
            let suffix = "/binary/2000?api=\(api)"
            let outcome = await performAHC(AHCRequest(url: server.url(suffix).absoluteString), api: api, configuration: captured())
            XCTAssertEqual(outcome.body.count, 2000, "\(api)")
            XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: suffix).count == 1 }, "\(api)")
            XCTAssertEqual(parts(of: suffix).count, 0, "\(api): the end follows at once and carries the body")
            // What it cost before parts: its start, head and end, folded into one frame when it ends within the fold window.
            let kinds = messages(of: suffix).map { message -> String in
                switch message {
                case .flowStarted: "started"
                case .flowResponse: "response"
                case .flowFinished: "finished"
                default: "\(message)"
                }
            }
            XCTAssertTrue([["started"], ["started", "finished"], ["started", "response", "finished"]].contains(kinds), "\(api): \(kinds)")
            XCTAssertEqual(inspector.finishedFlows(urlSuffix: suffix).first?.response?.body?.size, 2000, "\(api)")
        }
    }

    func testAVersion1ViewerNeverGetsAPartAndGetsTheBodyWhole() async {
        // This viewer never asks for version 2.
        let suffix = "/drip/5?viewer=1"
        let outcome = await performAHC(AHCRequest(url: server.url(suffix).absoluteString), api: .async, configuration: captured())
        XCTAssertEqual(outcome.body.count, 5 * 1024)
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: suffix).count == 1 })
        XCTAssertEqual(parts(of: suffix).count, 0)
        XCTAssertEqual(Set(inspector.frameVersions), [1])
        XCTAssertEqual(inspector.decodingErrors, [])
        let flow = inspector.finishedFlows(urlSuffix: suffix).first
        XCTAssertEqual(flow?.response?.body?.size, 5 * 1024)
        XCTAssertEqual(flow?.response?.body?.data, Data(dripped.prefix(Self.captureLimit)))
        XCTAssertNil(flow?.parts)
    }
}
#endif
