import FlowFilter
import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// The control state machine as pure code: no sockets, no clients, no
/// threads. Every adapter carries out what these actions say.
final class ExchangeControlTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:9/api/items?q=1")!

    private func policy(rules: [TrafficRule] = [], intercept: String? = nil, holdLimit: Int = 1024) throws -> ExchangeControl.Policy {
        let breakpoints = Breakpoints(timeout: 60)
        breakpoints.intercept(intercept)
        XCTAssertEqual(breakpoints.isActive, intercept != nil, "the filter compiles")
        return ExchangeControl.Policy(rules: RuleSet(compiling: rules), breakpoints: breakpoints, redactionMarker: "<redacted>", holdLimit: holdLimit)
    }

    private var request: ExchangeRequest {
        ExchangeRequest(method: "POST", url: url, headers: [HTTPHeader(name: "Authorization", value: "Bearer s3cret"),
                                                           HTTPHeader(name: "Accept", value: "*/*")], body: Data("a=1".utf8))
    }

    private func log(of request: ExchangeRequest, status: Int? = nil) -> NetworkLog {
        NetworkLog(request: Request(method: request.method, url: request.url.absoluteString, headers: request.headers),
                   response: status.map { Response(statusCode: $0, headers: []) }, timing: Timing(startedAt: Date()))
    }

    func testAnAppThatDidNotOptInIsNeverChangedNorHeld() throws {
        var control = ExchangeControl(policy: .none)
        XCTAssertFalse(control.policy.canChange)
        XCTAssertEqual(control.start(request), .send(request))
        XCTAssertEqual(control.requestReady(log(of: request)), .send)
        XCTAssertEqual(control.responseArrived(log(of: request, status: 200)), .deliver)
        XCTAssertNil(control.changes)
    }

    func testRulesChangeTheRequestAndTheRecordSaysWhat() throws {
        var control = ExchangeControl(policy: try policy(rules: [try TrafficRule(.mapRemote, spec: "|127.0.0.1:9|127.0.0.1:10"),
                                                                 try TrafficRule(.modifyHeaders, spec: "/X-Rule/on")]))
        guard case .send(let sent) = control.start(request) else { return XCTFail("not answered") }
        XCTAssertEqual(sent.url.absoluteString, "http://127.0.0.1:10/api/items?q=1")
        XCTAssertEqual(sent.headers.first("X-Rule"), "on")
        XCTAssertEqual(sent.body, request.body, "rules leave the body alone")
        XCTAssertEqual(control.changes?.rules.count, 2)
        XCTAssertEqual(control.changes?.originalURL, url.absoluteString)
        XCTAssertEqual(control.changes?.originalHeaders, request.sortedHeaders)
    }

    func testAMapLocalRuleForInboundRequestsAnswersOnlyAReceivedOne() throws {
        var rule = try TrafficRule(.mapLocal, spec: "|~inbound|/api/items|/fixtures/items.json")
        rule.files = [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data("[]".utf8))]
        var received = request
        received.direction = .inbound
        var inbound = ExchangeControl(policy: try policy(rules: [rule]))
        guard case .answer = inbound.start(received) else { return XCTFail("a received request is answered") }
        var outbound = ExchangeControl(policy: try policy(rules: [rule]))
        XCTAssertEqual(outbound.start(request), .send(request), "the app's own call is not")
    }

    func testMapLocalAnswersAndEndsTheExchange() throws {
        var rule = try TrafficRule(.mapLocal, spec: "|/api/items|/fixtures/items.json")
        rule.files = [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data("[]".utf8))]
        var control = ExchangeControl(policy: try policy(rules: [rule], intercept: "~u items"))
        guard case .answer(let response) = control.start(request) else { return XCTFail("answered locally") }
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.body, Data("[]".utf8))
        XCTAssertEqual(response.headers.first("Content-Length"), "2")
        XCTAssertEqual(control.changes?.mockedFrom, "/fixtures/items.json")
        XCTAssertEqual(control.requestReady(log(of: request)), .send, "an answered exchange is never held")
    }

    func testAHeldRequestIsEditedWithRedactedValuesAndATruncatedBodyKept() throws {
        var control = ExchangeControl(policy: try policy(intercept: "~u items"))
        _ = control.start(request)
        XCTAssertEqual(control.requestReady(log(of: request)), .hold)
        var edit = Request(method: "PUT", url: "http://127.0.0.1:9/api/items/7",
                           headers: [HTTPHeader(name: "Authorization", value: "<redacted>"), HTTPHeader(name: "X-Edited", value: "1")])
        edit.body = CapturedBody(data: Data("a".utf8), size: 3, isTruncated: true)
        guard case .send(let sent, edited: true) = control.requestDecided(.resume(FlowResume(id: FlowID(), request: edit))) else {
            return XCTFail("sent edited")
        }
        XCTAssertEqual(sent.method, "PUT")
        XCTAssertEqual(sent.url.path, "/api/items/7")
        XCTAssertEqual(sent.headers, [HTTPHeader(name: "Authorization", value: "Bearer s3cret"), HTTPHeader(name: "X-Edited", value: "1")])
        XCTAssertEqual(sent.body, Data("a=1".utf8), "the viewer saw only the start: the app's body goes")
        XCTAssertEqual(control.changes?.edited, [.request])
        XCTAssertEqual(control.changes?.originalURL, url.absoluteString)
    }

    func testAnEditedEmptyBodySendsNoBody() throws {
        var control = ExchangeControl(policy: try policy(intercept: "~q"))
        _ = control.start(request)
        _ = control.requestReady(log(of: request))
        let edit = Request(method: "POST", url: url.absoluteString, headers: [])
        guard case .send(let sent, edited: true) = control.requestDecided(.resume(FlowResume(id: FlowID(), request: edit))) else {
            return XCTFail("sent edited")
        }
        XCTAssertNil(sent.body)
        XCTAssertFalse(sent.bodyStreams)
    }

    func testKillTimeoutViewerGoneAndTheAppsCancelEachEndAHoldTheirWay() throws {
        let outcomes: [(Breakpoints.Decision, ExchangeControl.RequestRelease)] = [
            (.kill, .kill), (.release(.cancelled), .cancelled),
            (.release(.timeout), .send(request, edited: false)), (.release(.viewerGone), .send(request, edited: false)),
            (.resume(nil), .send(request, edited: false)),
        ]
        for (decision, expected) in outcomes {
            var control = ExchangeControl(policy: try policy(intercept: "~q"))
            _ = control.start(request)
            XCTAssertEqual(control.requestReady(log(of: request)), .hold)
            XCTAssertEqual(control.requestDecided(decision), expected, "\(decision)")
            XCTAssertNil(control.changes, "\(decision) changes nothing")
        }
    }

    func testAViewerThatWentAwayHoldsNoResponse() throws {
        let policy = try policy(intercept: "~u items")
        var control = ExchangeControl(policy: policy)
        _ = control.start(request)
        XCTAssertEqual(control.requestReady(log(of: request)), .hold)
        policy.breakpoints?.releaseAll(.viewerGone)
        XCTAssertEqual(control.requestDecided(.release(.viewerGone)), .send(request, edited: false))
        XCTAssertEqual(control.responseArrived(log(of: request, status: 200)), .deliver, "the filter went with the viewer")
    }

    func testASecondDecisionFindsNothingHeld() throws {
        var control = ExchangeControl(policy: try policy(intercept: "~q"))
        _ = control.start(request)
        _ = control.requestReady(log(of: request))
        XCTAssertEqual(control.requestDecided(.kill), .kill)
        XCTAssertEqual(control.requestDecided(.resume(nil)), .cancelled, "a late decision sends nothing")
    }

    func testAHeldResponseIsEditedWithItsLengthRecountedAndANonsenseStatusKept() throws {
        var control = ExchangeControl(policy: try policy(intercept: "~s"))
        _ = control.start(request)
        XCTAssertEqual(control.requestReady(log(of: request)), .send, "~s needs a response")
        XCTAssertEqual(control.responseArrived(log(of: request, status: 200)), .hold)
        XCTAssertTrue(control.isHoldingResponse)
        let held = ExchangeResponse(statusCode: 200, headers: [HTTPHeader(name: "Content-Length", value: "5"),
                                                               HTTPHeader(name: "Set-Cookie", value: "id=9")], body: Data("hello".utf8))
        let original = Response(statusCode: 200, headers: [])
        let edit = Response(statusCode: 7, headers: [HTTPHeader(name: "Content-Length", value: "5"), HTTPHeader(name: "Set-Cookie", value: "<redacted>")],
                            body: CapturedBody(data: Data("hi".utf8)))
        let release = control.responseDecided(.resume(FlowResume(id: FlowID(), response: edit)), held: held, original: original)
        XCTAssertEqual(release, .deliver(ExchangeResponse(statusCode: 200, headers: [HTTPHeader(name: "Content-Length", value: "2"),
                                                                                     HTTPHeader(name: "Set-Cookie", value: "id=9")],
                                                          body: Data("hi".utf8)), edited: true))
        XCTAssertEqual(control.changes?.edited, [.response])
        XCTAssertEqual(control.changes?.originalResponse, original)
    }

    func testAResponseBodyPastTheHoldLimitGoesOnUnheld() throws {
        var control = ExchangeControl(policy: try policy(intercept: "~s", holdLimit: 4))
        _ = control.start(request)
        _ = control.requestReady(log(of: request))
        XCTAssertEqual(control.responseArrived(log(of: request, status: 200)), .hold)
        XCTAssertEqual(control.holdLimit, 4)
        control.bodyOutgrewHold()
        XCTAssertFalse(control.isHoldingResponse)
        let held = ExchangeResponse(statusCode: 200, headers: [], body: Data())
        XCTAssertEqual(control.responseDecided(.resume(nil), held: held, original: nil), .cancelled, "nothing is held to decide on")
    }

    func testAReplayKeepsItsOriginBesideTheRulesChanges() throws {
        var control = ExchangeControl(policy: try policy(rules: [try TrafficRule(.modifyHeaders, spec: "/X-Rule/on")]))
        _ = control.start(request)
        let origin = ReplayOrigin(id: FlowID(), edited: true)
        control.isReplay(of: origin)
        XCTAssertEqual(control.changes?.replayOf, origin.id)
        XCTAssertEqual(control.changes?.edited, [.request])
        XCTAssertEqual(control.changes?.rules.count, 1)
    }

    func testHeaderSettingKeepsThePlaceOfTheFirstFieldAndDropsTheRest() {
        var headers = [HTTPHeader(name: "A", value: "1"), HTTPHeader(name: "b", value: "2"), HTTPHeader(name: "B", value: "3")]
        headers.set("B", to: "x")
        XCTAssertEqual(headers, [HTTPHeader(name: "A", value: "1"), HTTPHeader(name: "b", value: "x")])
        headers.set("c", to: "y")
        XCTAssertEqual(headers.last, HTTPHeader(name: "c", value: "y"))
        headers.set("a", to: nil)
        XCTAssertEqual(headers.map(\.name), ["b", "c"])
    }
}
