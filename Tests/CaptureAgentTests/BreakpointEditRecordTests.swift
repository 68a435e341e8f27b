import FlowFilter
import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// What a person changed at a request breakpoint is in the flow's change
/// record, the body and method included, so the viewer can say so.
final class BreakpointEditRecordTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:9/api/items")!

    private func held(body: Data?, holdLimit: Int = 1024) -> ExchangeControl {
        let breakpoints = Breakpoints(timeout: 60)
        breakpoints.intercept("~q")
        var control = ExchangeControl(policy: ExchangeControl.Policy(rules: .empty, breakpoints: breakpoints,
                                                                     redactionMarker: "<redacted>", holdLimit: holdLimit))
        let request = ExchangeRequest(method: "POST", url: url, headers: [HTTPHeader(name: "Accept", value: "*/*")], body: body)
        _ = control.start(request)
        XCTAssertEqual(control.requestReady(NetworkLog(request: Request(method: "POST", url: url.absoluteString, headers: request.headers),
                                                       timing: Timing(startedAt: Date()))), .hold)
        return control
    }

    private func resume(_ control: inout ExchangeControl, method: String = "POST", body: String?) {
        var edit = Request(method: method, url: url.absoluteString, headers: [HTTPHeader(name: "Accept", value: "*/*")])
        edit.body = body.map { CapturedBody(data: Data($0.utf8)) }
        _ = control.requestDecided(.resume(FlowResume(id: FlowID(), request: edit)))
    }

    func testABodyEditOfTheSameSizeKeepsTheAppsBody() {
        var control = held(body: Data(#"{"qty":1}"#.utf8))
        resume(&control, body: #"{"qty":2}"#)
        XCTAssertEqual(control.changes?.originalBody?.data, Data(#"{"qty":1}"#.utf8))
        XCTAssertNil(control.changes?.originalMethod)
        XCTAssertNil(control.changes?.originalHeaders, "the headers were left as they were")
    }

    func testABodyAddedWhereThereWasNoneIsRecordedAsEmpty() {
        var control = held(body: nil)
        resume(&control, body: "a=1")
        XCTAssertEqual(control.changes?.originalBody, CapturedBody(data: Data()))
    }

    func testAMethodEditIsRecorded() {
        var control = held(body: Data("a=1".utf8))
        resume(&control, method: "PUT", body: "a=1")
        XCTAssertEqual(control.changes?.originalMethod, "POST")
        XCTAssertNil(control.changes?.originalBody, "the body was sent as it was")
    }

    func testTheAppsBodyIsKeptOnlyUpToTheHoldLimit() {
        var control = held(body: Data(repeating: 0x61, count: 100), holdLimit: 10)
        resume(&control, body: "b")
        XCTAssertEqual(control.changes?.originalBody?.data.count, 10)
        XCTAssertEqual(control.changes?.originalBody?.size, 100)
        XCTAssertEqual(control.changes?.originalBody?.isTruncated, true)
    }

    func testTheRecordTravelsOnTheWire() throws {
        var control = held(body: Data("a=1".utf8))
        resume(&control, method: "PUT", body: "a=2")
        var log = NetworkLog(request: Request(method: "PUT", url: url.absoluteString, headers: []), timing: Timing(startedAt: Date()))
        log.changes = control.changes
        for version in [1, 2] {
            let hello = Hello(agentName: "CaptureAgent", agentVersion: "0", appName: "test", processID: 1, hostName: "here")
            var decoder = MessageDecoder()
            decoder.append(contentsOf: try FrameEncoder().encode(.hello(hello)))
            decoder.append(contentsOf: try FrameEncoder().encode(.flowStarted(log), version: version))
            _ = try decoder.next()
            guard case .flowStarted(let decoded)? = try decoder.next() else { return XCTFail("a flow") }
            XCTAssertEqual(decoded.changes?.originalMethod, "POST", "version \(version)")
            XCTAssertEqual(decoded.changes?.originalBody?.data, Data("a=1".utf8), "version \(version)")
        }
    }
}
