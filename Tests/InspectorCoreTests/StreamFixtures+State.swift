import Foundation
import InspectorIngest
import TestSupport
import WireProtocol

@testable import InspectorCore

/// ``StreamFixtures`` folded into a state, as the inbox brings them.
extension StreamFixtures {
    static let connection = ConnectionID(1)

    /// A state that has received `messages` from one agent, at `now`.
    static func state(_ messages: [Message], size: Size = Fixtures.wide, now: Double = 10) -> AppState {
        var state = AppState(size: size, timeZone: Fixtures.utc)
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch.addingTimeInterval(now)))
        _ = Reducer.reduce(&state, .tick(Fixtures.epoch.addingTimeInterval(now)))
        return state
    }

    /// More events into a state, as the inbox brings them.
    static func receive(_ messages: [Message], into state: inout AppState, now: Double = 10) {
        _ = Reducer.reduce(&state, .inbox(messages.map { .message(connection, $0) }, at: Fixtures.epoch.addingTimeInterval(now)))
    }
}
