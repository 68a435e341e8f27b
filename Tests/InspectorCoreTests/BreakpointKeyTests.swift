import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// The breakpoint keys (`i`, `a`, `A`, `X`, `e`) as the reducer turns them
/// into messages for the flow's agent; the editor text as a person edits it.
final class BreakpointKeyTests: XCTestCase {
    private let connection = ConnectionID(7)

    private func state(acceptsControl: Bool = true, held: HoldPhase? = .request) -> AppState {
        var state = AppState(timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = acceptsControl
        var events: [InboxEvent] = [.connected(connection, hello, peer: "unix"), .message(connection, .flowStarted(Fixtures.started(1)))]
        if let held { events.append(.message(connection, .held(FlowHold(id: Fixtures.id(1), phase: held, timeout: 60)))) }
        _ = Reducer.reduce(&state, .inbox(events, at: Fixtures.epoch))
        return state
    }

    private func type(_ text: String, into state: inout AppState) {
        for character in text { state.press(character == " " ? "space" : String(character)) }
    }

    func testInterceptSendsTheFilterToAgentsThatAcceptControlAndToThoseThatConnectLater() {
        var state = state(held: nil)
        state.press("i")
        XCTAssertEqual(state.prompt?.purpose, .intercept)
        type("~u /a", into: &state)
        XCTAssertEqual(state.press("enter"), .batch([.control(.intercept("~u /a"), to: connection)]))
        XCTAssertEqual(state.interceptFilter, "~u /a")

        var hello = Fixtures.hello()
        hello.acceptsControl = true
        let later = Reducer.reduce(&state, .inbox([.connected(ConnectionID(8), hello, peer: "unix")], at: Fixtures.epoch))
        XCTAssertEqual(later, .batch([.control(.intercept("~u /a"), to: ConnectionID(8))]))

        state.press("i", "C-u")
        XCTAssertEqual(state.press("enter"), .batch([.control(.intercept(nil), to: connection), .control(.intercept(nil), to: ConnectionID(8))]),
                       "empty turns breakpoints off, everywhere")
        XCTAssertNil(state.interceptFilter)
    }

    func testAnInvalidInterceptFilterIsRefusedAndTheOldOneStays() {
        var state = state(held: nil)
        state.press("i")
        type("~u /a", into: &state)
        state.press("enter")
        state.press("i", "C-u")
        type("~zz", into: &state)
        XCTAssertEqual(state.press("enter"), .none)
        XCTAssertEqual(state.interceptFilter, "~u /a")
        XCTAssertEqual(state.notice?.isError, true)
    }

    func testHeldFlowsAreResumedKilledOrResumedAll() {
        var state = state()
        XCTAssertEqual(state.session.store.heldSequences().count, 1)
        XCTAssertEqual(state.press("a"), .control(.resume(FlowResume(id: Fixtures.id(1))), to: connection))
        XCTAssertEqual(state.press("X"), .control(.kill(Fixtures.id(1)), to: connection))
        XCTAssertEqual(state.press("A"), .batch([.control(.resume(FlowResume(id: Fixtures.id(1))), to: connection)]))
        _ = Reducer.reduce(&state, .inbox([.message(connection, .released(FlowRelease(id: Fixtures.id(1), phase: .request, reason: .resumed)))],
                                          at: Fixtures.epoch))
        XCTAssertEqual(state.session.store.heldSequences(), [])
        XCTAssertEqual(state.press("a"), .none, "no longer held")
        XCTAssertEqual(state.notice?.isError, true)
    }

    func testAHeldFlowIsReleasedInTheViewWhenItsAgentGoes() {
        var state = state()
        _ = Reducer.reduce(&state, .inbox([.disconnected(connection, reason: nil)], at: Fixtures.epoch))
        XCTAssertEqual(state.session.store.heldSequences(), [])
    }

    func testEditingAHeldRequestResumesItWithTheEdit() throws {
        var state = state()
        state.press("enter")
        guard case .edit(let session) = state.press("e") else { return XCTFail("e opens the editor") }
        XCTAssertEqual(session.id, Fixtures.id(1))
        let edited = session.text.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.1").replacingOccurrences(of: "GET ", with: "DELETE ")
        let effect = Reducer.reduce(&state, .edited(session, text: edited, failure: nil))
        guard case .control(.resume(let resume), let to) = effect else { return XCTFail("\(effect)") }
        XCTAssertEqual(to, connection)
        XCTAssertEqual(resume.request?.method, "DELETE")

        XCTAssertEqual(Reducer.reduce(&state, .edited(session, text: session.text, failure: nil)), .none, "unchanged: still held")
        XCTAssertEqual(Reducer.reduce(&state, .edited(session, text: "nonsense", failure: nil)), .none)
        XCTAssertTrue(state.notice?.text.contains("line 1") == true, "\(String(describing: state.notice))")
    }

    func testEditingAFlowThatIsNotHeldReplaysTheEdit() {
        var state = state(held: nil)
        state.press("enter")
        guard case .edit(let session) = state.press("e") else { return XCTFail("e opens the editor") }
        let effect = Reducer.reduce(&state, .edited(session, text: session.text + "", failure: "boom"))
        XCTAssertEqual(effect, .none, "a failed editor sends nothing")
        guard case .control(.editedReplay(let id, let request), _) = Reducer.reduce(
            &state, .edited(session, text: session.text.replacingOccurrences(of: "GET", with: "PUT"), failure: nil))
        else { return XCTFail("saving a change replays it") }
        XCTAssertEqual(id, Fixtures.id(1))
        XCTAssertEqual(request.method, "PUT")
    }

    /// The agent replays URLSession and AsyncHTTPClient requests: another
    /// client's flow is sent by netinspect itself, and `e` edits it for
    /// netinspect to send.
    func testFlowsOfOtherClientsAreReplayedByNetinspectItself() {
        var state = AppState(timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        var log = Fixtures.started(1)
        log.source = CaptureSource(client: .openAPI, operationID: "listItems")
        _ = Reducer.reduce(&state, .inbox([.connected(connection, hello, peer: "unix"), .message(connection, .flowStarted(log))], at: Fixtures.epoch))
        guard case .send(let own) = state.press("r") else { return XCTFail("netinspect sends it") }
        XCTAssertEqual(own.replayOf, Fixtures.id(1))
        XCTAssertTrue(state.notice?.text.contains("replays URLSession, AsyncHTTPClient and Vapor client requests, this came from OpenAPI") == true, "\(String(describing: state.notice))")
        state.press("enter")
        guard case .edit(let session) = state.press("e"), case .ownReplay = session.purpose else {
            return XCTFail("edit, then netinspect sends it")
        }
    }

    /// Since the capture core, the agent replays AsyncHTTPClient flows too;
    /// a request the app received is netinspect's to send again.
    func testAsyncHTTPClientFlowsGoToTheAgentAndInboundFlowsToNetinspect() {
        var state = AppState(timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        var outbound = Fixtures.started(1)
        outbound.source = CaptureSource(client: .asyncHTTPClient, path: .wire)
        var inbound = Fixtures.started(2)
        inbound.direction = .inbound
        _ = Reducer.reduce(&state, .inbox([.connected(connection, hello, peer: "unix"), .message(connection, .flowStarted(outbound)),
                                           .message(connection, .flowStarted(inbound))], at: Fixtures.epoch))
        XCTAssertTrue(Reducer.agentReplays(outbound))
        XCTAssertFalse(Reducer.agentReplays(inbound))
        guard case .send(let own) = state.press("r") else { return XCTFail("netinspect sends the received request itself") }
        XCTAssertEqual(own.replayOf, Fixtures.id(2))
        XCTAssertTrue(state.notice?.text.contains("is a request") == true, "\(String(describing: state.notice))")
    }

    func testAnAppWithoutControlIsNeverAsked() {
        var state = state(acceptsControl: false)
        XCTAssertEqual(state.press("a"), .none)
        XCTAssertEqual(state.press("X"), .none)
        state.press("enter")
        XCTAssertEqual(state.press("e"), .none)
        XCTAssertTrue(state.notice?.text.contains("NETINSPECT_CONTROL=1") == true, "\(String(describing: state.notice))")
    }

    // MARK: - Editor text

    func testARequestSurvivesTheEditorTextUnchanged() throws {
        let request = WireProtocol.Request(
            method: "POST", url: "https://api.example.com/v1/orders?x=1",
            headers: [HTTPHeader(name: "Authorization", value: "<redacted>"), HTTPHeader(name: "X-Empty", value: "")],
            body: CapturedBody(data: Data("{\"a\":1}\n".utf8))
        )
        let text = HTTPMessageText.text(of: request)
        XCTAssertTrue(text.hasPrefix("POST https://api.example.com/v1/orders?x=1 HTTP/1.1\nAuthorization: <redacted>\nX-Empty: \n\n"), text)
        XCTAssertEqual(try HTTPMessageText.request(from: text, original: request), request)
        XCTAssertEqual(try HTTPMessageText.request(from: text.replacingOccurrences(of: "\n", with: "\r\n"), original: request).headers, request.headers)
    }

    func testABodyTheEditorCannotShowIsKeptByItsPlaceholder() throws {
        let truncated = WireProtocol.Request(method: "PUT", url: "http://h/x", headers: [],
                                             body: CapturedBody(data: Data("abc".utf8), size: 100_000, isTruncated: true))
        let text = HTTPMessageText.text(of: truncated)
        XCTAssertTrue(text.contains("100000 bytes kept"), text)
        let kept = try HTTPMessageText.request(from: text, original: truncated)
        XCTAssertEqual(kept.body?.isTruncated, true, "the agent keeps its own copy")
        let replaced = try HTTPMessageText.request(from: text.components(separatedBy: "\n\n")[0] + "\n\nnew body\n", original: truncated)
        XCTAssertEqual(replaced.body, CapturedBody(data: Data("new body".utf8)))
        let removed = try HTTPMessageText.request(from: text.components(separatedBy: "\n\n")[0] + "\n", original: truncated)
        XCTAssertNil(removed.body, "deleting the body sends none")
    }

    func testAResponseSurvivesTheEditorTextAndBadTextSaysWhere() throws {
        let response = Response(statusCode: 404, headers: [HTTPHeader(name: "Content-Type", value: "text/plain")],
                                body: CapturedBody(data: Data("gone".utf8)), mimeType: "text/plain")
        let text = HTTPMessageText.text(of: response)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 404 Not Found\n"), text)
        XCTAssertEqual(try HTTPMessageText.response(from: text, original: response), response)
        XCTAssertThrowsError(try HTTPMessageText.response(from: "HTTP/1.1 abc\n", original: response))
        XCTAssertThrowsError(try HTTPMessageText.request(from: "GET notaurl\n", original: WireProtocol.Request(method: "GET", url: "http://h/", headers: [])))
        do {
            _ = try HTTPMessageText.request(from: "GET http://h/ HTTP/1.1\nno colon here\n", original: WireProtocol.Request(method: "GET", url: "http://h/", headers: []))
            XCTFail("a header line without a colon is an error")
        } catch {
            XCTAssertEqual(error.line, 2)
        }
    }

    /// One rule for the newline an editor ends its file with, whichever
    /// editor sent the body: `n` (a new request, sent through the app),
    /// `e` on a held request, `e` on a finished one (a replay). The file's
    /// last newline is the editor's, not the body's; a body that ends with
    /// a newline keeps it (the text carries two).
    func testTheNewlineAnEditorEndsItsFileWithIsNotPartOfTheBodyWhicheverEditSentIt() throws {
        func bodies(_ text: String) throws -> [String?] {
            var held = state()
            held.press("enter")
            guard case .edit(let hold) = held.press("e"),
                  case .control(.resume(let resume), _) = Reducer.reduce(&held, .edited(hold, text: text, failure: nil)) else {
                throw Unexpected("e on a held request makes no resume")
            }
            var finished = state(held: nil)
            finished.press("enter")
            guard case .edit(let replay) = finished.press("e"),
                  case .control(.editedReplay(_, let replayed), _) = Reducer.reduce(&finished, .edited(replay, text: text, failure: nil)) else {
                throw Unexpected("e on a finished flow makes no replay")
            }
            var fresh = state(held: nil)
            guard case .edit(let compose) = fresh.press("n") else { throw Unexpected("n opens no editor") }
            let composed: WireProtocol.Request
            switch Reducer.reduce(&fresh, .edited(compose, text: text, failure: nil)) {
            case .control(.compose(_, let request), _): composed = request
            case .send(let own): composed = own.request
            case let other: throw Unexpected("n sent nothing: \(other)")
            }
            return [resume.request, replayed, composed].map { $0?.body.map { String(decoding: $0.data, as: UTF8.self) } }
        }
        let head = "POST https://api.example.com/v1/items HTTP/1.1\nContent-Type: application/json\n\n"
        XCTAssertEqual(try bodies(head + "{\"composed\": true}\n"), Array(repeating: #"{"composed": true}"#, count: 3))
        XCTAssertEqual(try bodies(head + "{\"composed\": true}"), Array(repeating: #"{"composed": true}"#, count: 3),
                       "an editor that writes no final newline")
        XCTAssertEqual(try bodies(head + "line\n\n"), Array(repeating: "line\n", count: 3), "the body's own newline stays")
    }

    private struct Unexpected: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
