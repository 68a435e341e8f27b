import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// When the app cannot replay a flow (the agent no longer keeps it, never
/// kept its body, or a value was redacted), netinspect says so and sends it
/// with its own client, never guessing what it does not have.
final class ReplayByNetinspectTests: XCTestCase {
    private func controlledAgent(_ messages: [Message]) -> AppState {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        var hello = Fixtures.hello()
        hello.acceptsControl = true
        let connection = ConnectionID(1)
        _ = Reducer.reduce(&state, .inbox([.connected(connection, hello, peer: "unix")] + messages.map { .message(connection, $0) },
                                          at: Fixtures.epoch))
        return state
    }

    func testReplayOfAFlowOlderThanTheAgentKeepsSaysSoAndNetinspectSendsIt() {
        let count = Reducer.agentReplayDepth + 1
        var state = controlledAgent((1...count).flatMap { [Message.flowStarted(Fixtures.started($0)), .flowFinished(Fixtures.finished($0))] })
        let effect = state.press("g", "r")
        XCTAssertEqual(state.notice?.text.contains("keeps only its last \(Reducer.agentReplayDepth) requests"), true, "\(String(describing: state.notice))")
        guard case .send(let own) = effect else {
            return XCTFail("the oldest flow goes to netinspect's own client: \(effect)")
        }
        XCTAssertEqual(own.replayOf, Fixtures.id(1))
        XCTAssertFalse(own.isEdited)
        state.press("G")
        XCTAssertEqual(state.press("r"), .control(.replay(Fixtures.id(count)), to: ConnectionID(1)), "the newest is still the app's to replay")
    }

    func testARequestBodyTheAgentDoesNotKeepIsSentByNetinspectOnceFilledIn() {
        let size = Reducer.agentReplayBytes + 1
        let upload = Fixtures.started(1, method: "PUT", body: CapturedBody(data: Data(repeating: 0x61, count: 1024), size: size, isTruncated: true))
        var state = controlledAgent([.flowStarted(upload)])
        guard case .edit(let session) = state.press("r"), case .ownReplay = session.purpose else {
            return XCTFail("the agent does not keep it, and the log has only its start")
        }
        XCTAssertTrue(state.notice?.text.contains("does not keep a request body over 16 MiB") == true, "\(String(describing: state.notice))")
        XCTAssertTrue(state.notice?.text.contains("the body (only its start was captured)") == true, "\(String(describing: state.notice))")
    }

    func testAFlowWithARedactedValueOpensTheEditorInsteadOfGuessing() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let secret = Fixtures.started(1, headers: [HTTPHeader(name: "Authorization", value: "<redacted>")])
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(secret), .flowFinished(Fixtures.finished(1))]),
                                          at: Fixtures.epoch))
        guard case .edit(let session) = state.press("r"), case .ownReplay = session.purpose else {
            return XCTFail("a redacted header must be filled in by the person")
        }
        XCTAssertTrue(state.notice?.text.contains("the redacted Authorization") == true, "\(String(describing: state.notice))")
        let left = Reducer.reduce(&state, .edited(session, text: session.text.replacingOccurrences(of: "HTTP/1.1\n", with: "HTTP/1.1\nX-Extra: 1\n"), failure: nil))
        XCTAssertEqual(left, .none, "the marker is still there: nothing is sent")
        XCTAssertTrue(state.notice?.isError == true && state.notice?.text.contains("never guesses") == true, "\(String(describing: state.notice))")
        let filled = session.text.replacingOccurrences(of: "<redacted>", with: "Bearer mine")
        guard case .send(let own) = Reducer.reduce(&state, .edited(session, text: filled, failure: nil)) else {
            return XCTFail("once filled in, netinspect sends it")
        }
        XCTAssertEqual(own.request.headers.first("Authorization"), "Bearer mine")
        XCTAssertTrue(own.isEdited)
    }
}
