import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol

/// A service's inbound request and the calls it made while handling it,
/// as an agent with inbound capture reports them.
///
/// Flow 10 is `POST /checkout`, received by the app (0.200 s). While
/// handling it, the app made 11 (`GET /inventory/42`, quick), 12
/// (`POST /payments`, the slowest) and 13 (`GET /shipping`, a 503). Flow 15
/// is a background call made during that time outside any handler, flow 14
/// one made later; neither has a parent.
enum TracedFlows {
    static let parent = 10
    static let calls = [11, 12, 13]

    static func inbound() -> NetworkLog {
        var log = Fixtures.started(10, method: "POST", url: "http://127.0.0.1:8080/checkout", at: 10)
        log.direction = .inbound
        return log
    }

    static func call(_ number: Int, method: String = "GET", path: String, at offset: Double) -> NetworkLog {
        var log = Fixtures.started(number, method: method, url: "http://127.0.0.1:9000\(path)", at: 10 + offset)
        log.parentID = Fixtures.id(parent)
        return log
    }

    /// Every message, the parent's first unless `parentLast`.
    static func messages(parentLast: Bool = false, withParent: Bool = true) -> [Message] {
        let parentMessages: [Message] = [.flowStarted(inbound()), .flowFinished(Fixtures.finished(10, body: #"{"order":7}"#, duration: 0.200, at: 10))]
        let others: [Message] = [
            .flowStarted(call(11, path: "/inventory/42", at: 0.010)),
            .flowFinished(Fixtures.finished(11, body: "7", duration: 0.030, at: 10.010)),
            .flowStarted(Fixtures.started(15, url: "http://127.0.0.1:9100/metrics", at: 10.030)),
            .flowFinished(Fixtures.finished(15, body: "ok", duration: 0.005, at: 10.030)),
            .flowStarted(call(12, method: "POST", path: "/payments", at: 0.050)),
            .flowFinished(Fixtures.finished(12, body: #"{"paid":true}"#, duration: 0.120, at: 10.050)),
            .flowStarted(call(13, path: "/shipping", at: 0.060)),
            .flowFinished(Fixtures.finished(13, status: 503, body: "busy", contentType: "text/plain", duration: 0.020, at: 10.060)),
            .flowStarted(Fixtures.started(14, url: "http://127.0.0.1:9000/health", at: 12)),
            .flowFinished(Fixtures.finished(14, body: "ok", duration: 0.004, at: 12)),
        ]
        guard withParent else { return others }
        return parentLast ? others + parentMessages : parentMessages + others
    }

    static func state(size: Size = .minimum, parentLast: Bool = false, withParent: Bool = true) -> AppState {
        var state = AppState(size: size, timeZone: Fixtures.utc)
        feed(messages(parentLast: parentLast, withParent: withParent), to: &state)
        return state
    }

    static func feed(_ messages: [Message], to state: inout AppState) {
        _ = Reducer.reduce(&state, .inbox([.listening(.unix(path: "/tmp/netinspect-test.sock"))] + Fixtures.connection(messages: messages),
                                          at: Fixtures.epoch.addingTimeInterval(20)))
    }

    /// The flow numbers of the list's rows, top to bottom.
    static func rowNumbers(_ state: AppState) -> [Int] {
        state.rows.compactMap { state.session.store[$0].map { Int($0.log.id.description.suffix(12))! } }
    }
}
