import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Version 2 is the viewer's to ask for: a real agent against a stand-in
/// inspector on a real socket, once as a viewer older than version 2 (it
/// never asks) and once as one that asks. The flows are the same either way.
final class ProtocolNegotiationTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server?.shutdown()
    }

    /// Every byte value, so base64 versus raw bytes makes a difference.
    private let upload = Data((0 ..< 2048).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    private func startAgent(_ inspector: TestInspector) throws -> (CaptureAgent, URLSession) {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)))
        let configuration = URLSessionConfiguration.default
        agent.capture(configuration)
        return (agent, URLSession(configuration: configuration))
    }

    private func post(_ index: Int, on session: URLSession) async -> AppOutcome {
        var request = URLRequest(url: server.url("/echo?i=\(index)"))
        request.httpMethod = "POST"
        request.httpBody = upload
        return await performExchange(request, on: session, style: .completionHandler)
    }

    private func assertBodiesIntact(_ flows: [NetworkLog], file: StaticString = #filePath, line: UInt = #line) {
        for flow in flows {
            XCTAssertEqual(flow.request.body?.data, upload, flow.request.url, file: file, line: line)
            XCTAssertEqual(flow.response?.body?.data, upload, flow.request.url, file: file, line: line)
        }
    }

    func testTheHelloOffersVersion2AndAViewerThatNeverAsksGetsVersion1Only() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("v1-viewer"))
        defer { inspector.kill() }
        let (agent, session) = try startAgent(inspector)
        defer { agent.stop() }
        XCTAssertTrue(eventually { inspector.allMessages.count >= 2 })
        guard case .hello(let hello)? = inspector.allMessages.first else { return XCTFail("\(inspector.allMessages)") }
        XCTAssertEqual(hello.protocolVersion, 1)
        XCTAssertEqual(hello.highestProtocolVersion, 2)
        for index in 0 ..< 40 { _ = await post(index, on: session) }
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "").count == 40 })
        assertBodiesIntact(inspector.finishedFlows(urlSuffix: ""))
        XCTAssertEqual(Set(inspector.frameVersions), [1], "an older viewer never sees a version-2 frame")
        XCTAssertEqual(inspector.decodingErrors, [])
    }

    func testAViewerThatAsksGetsVersion2FramesCarryingTheSameFlows() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("v2-viewer"))
        defer { inspector.kill() }
        let (agent, session) = try startAgent(inspector)
        defer { agent.stop() }
        let connection = inspector.latestConnection()
        inspector.write(ViewerMessage.useProtocolVersion(2).frame(), toConnection: connection)
        // The agent reads what the viewer sent between writes: at most a few requests go out as version 1.
        var sent = 0
        while !inspector.frameVersions.contains(2), sent < 200 {
            _ = await post(sent, on: session)
            sent += 1
        }
        for index in sent ..< sent + 20 { _ = await post(index, on: session) }
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "").count == sent + 20 })
        assertBodiesIntact(inspector.finishedFlows(urlSuffix: ""))
        let versions = inspector.frameVersions
        XCTAssertEqual(Array(versions.prefix(2)), [1, 1], "hello and status are version 1")
        // At least a frame a flow: a flow that finished before its start was written goes as one frame (folded).
        XCTAssertGreaterThanOrEqual(versions.filter { $0 == 2 }.count, 20, "the last 20 flows went as version 2")
        XCTAssertEqual(versions.drop { $0 == 1 }.filter { $0 == 1 }, [], "no version-1 frame after the first version-2 one")
        XCTAssertEqual(inspector.decodingErrors, [])
    }

    /// Folding is for a viewer that reads version 2. The next viewer has not
    /// said which version it reads when the agent connects to it, and with
    /// control allowed the agent waits up to a second for its rules before
    /// writing: flows that end meanwhile must reach an older viewer as their
    /// own events, not folded into one.
    func testAViewerAfterOneThatReadVersion2GetsEveryEventOfAFlowUntilItAsks() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("v2-then-v1"))
        defer { inspector.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.allowsControl = true
        })
        defer { agent.stop() }
        let configuration = URLSessionConfiguration.default
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        inspector.write(ViewerMessage.useProtocolVersion(2).frame(), toConnection: inspector.latestConnection())
        // The agent writes nothing for up to a second, waiting for the viewer's rules.
        let deadline = Date().addingTimeInterval(10)
        var sent = 0
        while !inspector.frameVersions.contains(2), Date() < deadline {
            _ = await post(sent, on: session)
            sent += 1
        }
        XCTAssertTrue(inspector.frameVersions.contains(2), "the first viewer reads version 2")

        inspector.dropConnections()
        XCTAssertTrue(eventually { inspector.messagesByConnection.count == 2 }, "the agent connects again")
        var after: [Int] = []
        for index in 1000 ..< 1005 {
            _ = await post(index, on: session)
            after.append(index)
        }
        XCTAssertTrue(eventually { after.allSatisfy { !inspector.finishedFlows(urlSuffix: "i=\($0)").isEmpty } })
        let second = inspector.messagesByConnection[1]
        for index in after {
            guard let id = inspector.finishedFlows(urlSuffix: "i=\(index)").first?.id else { continue }
            let events = second.compactMap { message -> String? in
                switch message {
                case .flowStarted(let log) where log.id == id: log.response == nil ? "started" : "started, folded"
                case .flowResponse(let event) where event.id == id: "response"
                case .flowFinished(let event) where event.id == id: "finished"
                default: nil
                }
            }
            // (A quick URLSession flow's response may come with its end, in flowFinished.)
            XCTAssertEqual(events.first, "started", "request \(index): \(events)")
            XCTAssertEqual(events.last, "finished", "request \(index): \(events)")
        }
    }

    func testAViewerAskingForAVersionTheAgentDoesNotSpeakIsIgnored() async throws {
        let inspector = try TestInspector(path: temporarySocketPath("v9-viewer"))
        defer { inspector.kill() }
        let (agent, session) = try startAgent(inspector)
        defer { agent.stop() }
        inspector.write(ViewerMessage.useProtocolVersion(9).frame(), toConnection: inspector.latestConnection())
        for index in 0 ..< 40 { _ = await post(index, on: session) }
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "").count == 40 })
        XCTAssertEqual(Set(inspector.frameVersions), [1])
    }
}
