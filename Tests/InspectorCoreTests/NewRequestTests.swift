import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// `n` and `:new curl …`: a request a person writes goes through a
/// connected app's own client when one allows control, else netinspect's,
/// and nothing is sent that the person did not mean.
final class NewRequestTests: XCTestCase {
    private func state(apps: [(app: String, controls: Bool, urls: [String])]) -> AppState {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        var number = 0
        for (index, app) in apps.enumerated() {
            var hello = Fixtures.hello(app: app.app, pid: 100 + index)
            hello.acceptsControl = app.controls
            let connection = ConnectionID(UInt64(index + 1))
            var events: [InboxEvent] = [.connected(connection, hello, peer: "unix")]
            for url in app.urls {
                number += 1
                events += [.message(connection, .flowStarted(Fixtures.started(number, url: url))),
                           .message(connection, .flowFinished(Fixtures.finished(number)))]
            }
            _ = Reducer.reduce(&state, .inbox(events, at: Fixtures.epoch))
        }
        return state
    }

    private struct NoEditor: Error, CustomStringConvertible {
        var effect: String
        var description: String { "n opens no editor: \(effect)" }
    }

    private func openNew(_ state: inout AppState) throws -> EditSession {
        let effect = state.press("n")
        guard case .edit(let session) = effect else { throw NoEditor(effect: "\(effect)") }
        return session
    }

    func testNWithNoFlowOpensTheTemplateAndAnUnchangedOrEmptyFileSendsNothing() throws {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        guard case .edit(let session) = state.press("n"), case .compose(start: nil) = session.purpose else {
            return XCTFail("n opens the editor on a new request")
        }
        XCTAssertEqual(session.text, Reducer.composeTemplate)
        XCTAssertTrue(session.text.hasPrefix("GET https://example.com/ HTTP/1.1\n"))
        XCTAssertEqual(Reducer.reduce(&state, .edited(session, text: session.text, failure: nil)), .none)
        XCTAssertEqual(state.notice, Notice(text: "The template is unchanged: nothing sent", isError: false))
        XCTAssertEqual(Reducer.reduce(&state, .edited(session, text: "\n  \n", failure: nil)), .none)
        XCTAssertEqual(state.notice, Notice(text: "The file was empty: nothing sent", isError: false))
        XCTAssertEqual(Reducer.reduce(&state, .edited(session, text: "GET https://example.com/ HTTP/1.1\nnot a header\n", failure: nil)), .none)
        XCTAssertEqual(state.notice?.isError, true)
        XCTAssertEqual(state.notice?.text, "Edit not applied (line 2: expected 'Name: value' (an empty line ends the headers)); nothing was sent")
    }

    func testWithNoAppThatAllowsControlNetinspectSendsItMarkedComposed() throws {
        var state = state(apps: [("orders", false, ["https://api.example.com/v1/items"])])
        state.press("G")
        let session = try openNew(&state)
        guard case .compose(let start?) = session.purpose else { return XCTFail("the selected flow is the start") }
        XCTAssertEqual(start.url, "https://api.example.com/v1/items")
        XCTAssertTrue(session.text.hasPrefix("GET https://api.example.com/v1/items HTTP/1.1\n"), session.text)
        let text = "POST http://127.0.0.1:9/new HTTP/1.1\nContent-Type: text/plain\n\nhello\n"
        let effect = Reducer.reduce(&state, .edited(session, text: text, failure: nil))
        guard case .send(let own) = effect else { return XCTFail("netinspect's own client sends it: \(effect)") }
        XCTAssertNil(own.replayOf, "composed, no replay")
        XCTAssertEqual(own.request.method, "POST")
        XCTAssertEqual(own.request.url, "http://127.0.0.1:9/new")
        XCTAssertEqual(own.request.body?.data, Data("hello".utf8))
        XCTAssertEqual(state.notice?.text, "No connected app allows control: netinspect sent POST /new itself")
    }

    func testTheAppWhoseFlowsGoToTheHostSendsIt() throws {
        var state = state(apps: [("orders", true, ["https://api.example.com/v1/items", "https://api.example.com/v1/users"]),
                                 ("billing", true, ["https://billing.example.com/invoices"])])
        let toOrders = Request(method: "GET", url: "https://api.example.com/v1/health", headers: [HTTPHeader(name: "X-A", value: "1")])
        XCTAssertEqual(Reducer.sendComposed(toOrders, startedFrom: nil, in: &state),
                       .control(.compose(through: Fixtures.id(2), toOrders), to: ConnectionID(1)),
                       "the newest flow of the app that talks to api.example.com carries it")
        XCTAssertEqual(state.notice?.text, "Sent GET /v1/health through orders's client (its flows go to api.example.com)")

        let elsewhere = Request(method: "GET", url: "https://other.example.net/", headers: [])
        XCTAssertEqual(Reducer.sendComposed(elsewhere, startedFrom: nil, in: &state),
                       .control(.compose(through: Fixtures.id(3), elsewhere), to: ConnectionID(2)))
        XCTAssertEqual(state.notice?.text, "Sent GET / through billing's client (the newest app that allows control)")
    }

    func testStartingFromAFlowItsAppSendsItAndRestoresWhatTheLogRedacted() throws {
        var state = state(apps: [("orders", true, ["https://api.example.com/v1/items"]),
                                 ("billing", true, ["https://billing.example.com/invoices"])])
        state.press("g")
        let session = try openNew(&state)
        XCTAssertEqual(session.id, Fixtures.id(1))
        let text = session.text.replacingOccurrences(of: "HTTP/1.1\n", with: "HTTP/1.1\nAuthorization: <redacted>\n")
        guard case .control(.compose(let carrier, let request), let connection) = Reducer.reduce(&state, .edited(session, text: text, failure: nil)) else {
            return XCTFail("the app of the flow begun from sends it: \(String(describing: state.notice))")
        }
        XCTAssertEqual(carrier, Fixtures.id(1))
        XCTAssertEqual(connection, ConnectionID(1))
        XCTAssertEqual(request.headers.first("Authorization"), "<redacted>", "the agent puts its own value back")
        XCTAssertEqual(state.notice?.text, "Sent GET /v1/items through orders's client (the flow you began from)")

        // Through another flow's client the marker would be a guess: refused.
        let guess = Request(method: "GET", url: "https://billing.example.com/x", headers: [HTTPHeader(name: "Authorization", value: "<redacted>")])
        XCTAssertEqual(Reducer.sendComposed(guess, startedFrom: nil, in: &state), .none)
        XCTAssertEqual(state.notice?.isError, true)
        XCTAssertTrue(state.notice?.text.contains("the redacted Authorization still to fill in") == true, "\(String(describing: state.notice))")
    }

    func testNewCurlSendsAtOnceAndNamesWhatItCannotRead() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let effect = state.enter("new curl -X PUT -H 'X-Id: 7' --data-raw 'a=1' http://127.0.0.1:9/items/7", after: ":")
        guard case .send(let own) = effect else { return XCTFail("the pasted command is sent at once: \(effect)") }
        XCTAssertEqual(own.request.method, "PUT")
        XCTAssertEqual(own.request.headers.first("X-Id"), "7")
        XCTAssertEqual(own.request.body?.data, Data("a=1".utf8))
        XCTAssertNil(own.replayOf)

        XCTAssertEqual(state.enter("new curl -F a=@b http://h/", after: ":"), .none)
        XCTAssertEqual(state.notice?.isError, true)
        XCTAssertTrue(state.notice?.text.hasPrefix("Not sent: curl's -F is not an option netinspect imports") == true, "\(String(describing: state.notice))")
        XCTAssertEqual(state.enter("new wget http://h/", after: ":"), .none)
        XCTAssertTrue(state.notice?.text.contains("new takes nothing") == true, "\(String(describing: state.notice))")
        guard case .edit(let session) = state.enter("new", after: ":"), case .compose(start: nil) = session.purpose else {
            return XCTFail(":new alone is n")
        }
        // A curl command pasted into the editor is read as curl.
        let pasted = "curl 'http://127.0.0.1:9/pasted' \\\n  -H 'X-From: editor'\n"
        guard case .send(let fromEditor) = Reducer.reduce(&state, .edited(session, text: pasted, failure: nil)) else {
            return XCTFail("a curl command in the editor is sent: \(String(describing: state.notice))")
        }
        XCTAssertEqual(fromEditor.request.url, "http://127.0.0.1:9/pasted")
        XCTAssertEqual(fromEditor.request.headers.first("X-From"), "editor")
    }

    func testAComposedFlowIsMarkedInTheListAndTheDetail() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        var log = Fixtures.started(1, url: "https://api.example.com/v1/new")
        log.changes = FlowChanges(rules: [], composed: true)
        log.source = CaptureSource(client: .urlSession)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(log), .flowFinished(Fixtures.finished(1))]), at: Fixtures.epoch))
        XCTAssertTrue(state.screen().contains("✚ /v1/new"), state.screen())
        state.press("enter")
        XCTAssertTrue(state.screen().contains("Composed a request you wrote, sent by the app's agent, through its URLSession"), state.screen())
    }
}
