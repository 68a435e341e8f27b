import Foundation
import XCTest
import WireProtocol
@testable import InspectorCore

/// HAR carries what the agent says about how it captured a flow: the
/// client's header fields (as sent, and which they were), its phase timings
/// (in HAR's own `timings` too), decoded bodies, and what rules changed.
final class HARCaptureFieldsTests: XCTestCase {
    static let flow = NetworkLog(
        sessionID: 1, taskID: 3,
        request: Request(method: "GET", url: "http://127.0.0.1:8080/feed",
                         headers: [HTTPHeader(name: "Accept", value: "application/json")],
                         clientHeaders: [HTTPHeader(name: "Host", value: "127.0.0.1:8080"),
                                         HTTPHeader(name: "Accept-Encoding", value: "deflate, gzip")]),
        response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Encoding", value: "gzip")],
                           body: CapturedBody(data: Data("{}".utf8), isDecoded: true), mimeType: "application/json"),
        timing: Timing(startedAt: HARFileTests.start, requestSent: 0.020, firstResponseByte: 0.050, finished: 0.060,
                       phases: TransferPhases(dns: 0.004, connect: 0.003, tls: 0.008, wait: 0.030, receive: 0.010, source: "libcurl")),
        state: .completed,
        source: CaptureSource(client: .urlSession, path: .inPlace),
        changes: FlowChanges(rules: ["map-remote |api.example.com|127.0.0.1:8080"], originalURL: "https://api.example.com/feed",
                             replayOf: FlowID("00000000-0000-4000-8000-000000000009"), edited: [.request])
    )

    private func entry() throws -> [String: Any] {
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: HARFile.encode([Self.flow])) as? [String: Any])
        return try XCTUnwrap(((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
    }

    func testRoundTripKeepsEveryCaptureField() throws {
        XCTAssertEqual(try HARFile.decode(HARFile.encode([Self.flow])), [Self.flow])
    }

    func testAComposedFlowStaysComposedThroughHAR() throws {
        var composed = Self.flow
        composed.changes = FlowChanges(rules: [], composed: true)
        XCTAssertEqual(try HARFile.decode(HARFile.encode([composed])).first?.changes, FlowChanges(rules: [], composed: true))
    }

    func testRequestHeadersAreTheHeadAsSent() throws {
        let headers = try XCTUnwrap((try entry()["request"] as? [String: Any])?["headers"] as? [[String: String]])
        XCTAssertEqual(headers.map { $0["name"] }, ["Accept", "Host", "Accept-Encoding"])
    }

    func testTheClientsPhasesFillHARTimingsAndStillSumToTheDuration() throws {
        let timings = try XCTUnwrap(try entry()["timings"] as? [String: Double])
        XCTAssertEqual(timings["dns"], 4)
        XCTAssertEqual(timings["connect"], 11, "HAR's connect includes TLS")
        XCTAssertEqual(timings["ssl"], 8)
        XCTAssertEqual(timings["send"], 5, "what is left of the 20 ms to request sent")
        XCTAssertEqual(timings["wait"], 30)
        XCTAssertEqual(timings["receive"], 10)
        XCTAssertEqual(try entry()["time"] as? Double, 60)
    }

    func testTheArchiveStillValidates() throws {
        try HARSchemaValidator.validate(HARFile.encode([Self.flow] + HARFileTests.flows))
    }
}
