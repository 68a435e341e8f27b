import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// What the screens say: apps without control, edit notes, a file rather
/// than an agent, whole command names in the help.
final class ScreenWordingTests: XCTestCase {
    func testRulesViewAndInterceptSpeakOfAppsInGoodEnglish() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: []), at: Fixtures.epoch))
        state.press("R")
        XCTAssertTrue(state.screen().contains("the connected app does not allow control"), state.screen())
        state.press("q", "i")
        state.type("~m POST")
        state.press("enter")
        XCTAssertTrue(state.notice?.text.contains("1 app without control ignores it") == true, "\(String(describing: state.notice))")
    }

    func testEditNotesNameHeadersAndTheOriginalAnswerBriefly() {
        let request = Request(method: "GET", url: "https://x/", headers: [HTTPHeader(name: "Accept", value: "a"), HTTPHeader(name: "X-New", value: "b")])
        let changes = FlowChanges(rules: [], originalHeaders: [HTTPHeader(name: "Accept", value: "z"), HTTPHeader(name: "Cookie", value: String(repeating: "c", count: 300))],
                                  originalResponse: Response(statusCode: 201))
        let text = DetailContent.changeLines(changes, request: request).map(\.text).joined(separator: "\n")
        XCTAssertTrue(text.contains("Edited headers: added X-New; removed Cookie; changed Accept"), text)
        XCTAssertTrue(text.contains("Edited response: the server answered 201 Created"), text)
        XCTAssertFalse(text.contains("ccc"), "values stay out of the summary:\n\(text)")
    }

    func testViewingAFileSaysFileNotAgent() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let hello = Hello(agentName: Session.fileAgentName, agentVersion: "", appName: "shop.har", processID: 0, hostName: "h")
        _ = Reducer.reduce(&state, .inbox([.connected(.file, hello, peer: "shop.har"), .message(.file, .flowStarted(Fixtures.started(1)))],
                                          at: Fixtures.epoch))
        let bar = state.screen().split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(bar.contains("file: shop.har"), bar)
        XCTAssertFalse(bar.contains("agent"), bar)
    }

    func testHelpShowsWholeCommandNames() {
        var state = AppState(size: Size(width: 160, height: 200), timeZone: Fixtures.utc)
        state.press("?")
        let help = state.screen(size: Size(width: 160, height: 200))
        XCTAssertTrue(help.contains(":filter.httpErrors "), help)
        XCTAssertTrue(help.contains(":intercept.toggle "), help)
    }
}
