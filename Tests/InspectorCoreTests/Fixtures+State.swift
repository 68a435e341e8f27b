import Foundation
import InspectorIngest
import TestSupport
import WireProtocol

@testable import InspectorCore

/// The viewer's side of ``Fixtures``: the flows as the inbox brings them,
/// folded into states, and ways to drive a state by keys.
extension Fixtures {
    /// A terminal wide enough for every column.
    static let wide = Size(width: 120, height: 30)

    /// Inbox events of one agent connecting and sending `flows`.
    static func connection(_ connection: UInt64 = 1, app: String = "orders-service", messages: [Message]) -> [InboxEvent] {
        let id = ConnectionID(connection)
        return [.connected(id, hello(app: app), peer: "unix")] + messages.map { .message(id, $0) }
    }

    /// A state showing a realistic mix: completed JSON, a 404, a 500, a
    /// failure, a pending request, a form POST and a binary download.
    static func mixedState(size: Size = .minimum) -> AppState {
        var state = AppState(size: size, timeZone: utc)
        let formBody = CapturedBody(data: Data("name=Zo%C3%AB+K&city=%E6%9D%B1%E4%BA%AC&empty=".utf8))
        let messages: [Message] = [
            .flowStarted(started(1)),
            .flowFinished(finished(1)),
            .flowStarted(started(2, url: "https://api.example.com/v1/missing")),
            .flowFinished(finished(2, status: 404, body: #"{"error":"not found"}"#, duration: 0.045)),
            .flowStarted(started(3, method: "POST", url: "https://auth.example.org/login",
                                 headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                                 body: formBody)),
            .flowFinished(finished(3, status: 500, body: "internal error\nretry later", contentType: "text/plain", duration: 1.5)),
            .flowStarted(started(4, url: "https://slow.example.net/timeout")),
            .flowFinished(failed(4)),
            .flowStarted(started(5, url: "https://cdn.example.com/logo.png")),
            .flowFinished(finished(5, bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 0x10],
                                  contentType: "image/png", duration: 0.3)),
            .flowStarted(started(6, method: "DELETE", url: "https://api.example.com/v1/items/9")),
        ]
        _ = Reducer.reduce(&state, .inbox([.listening(.unix(path: "/tmp/netinspect-test.sock"))] + connection(messages: messages), at: epoch.addingTimeInterval(10)))
        return state
    }
}

extension AppState {
    /// The screen rendered at `size`, as text.
    func screen(size: Size = Fixtures.wide) -> String {
        Renderer.render(self, size: size).text
    }

    /// Sends keys by their keymap spelling, e.g. `press("j", "enter")`.
    @discardableResult
    mutating func press(_ specs: String...) -> Effect {
        var effect = Effect.none
        for spec in specs {
            effect = Reducer.reduce(&self, .key(Key(spec: spec)!))
        }
        return effect
    }

    /// Types text into the prompt, character by character.
    mutating func type(_ text: String) {
        for character in text { _ = Reducer.reduce(&self, .key(.character(character))) }
    }

    /// Opens a prompt with `key` (`f`, `/`), replaces its text and applies it.
    @discardableResult
    mutating func enter(_ text: String, after key: String) -> Effect {
        press(key, "C-u")
        type(text)
        return press("enter")
    }
}
