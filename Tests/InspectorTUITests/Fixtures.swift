import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// Deterministic flows and sessions for the tests.
enum Fixtures {
    /// 2026-11-21 09:30:00 UTC.
    static let epoch = Date(timeIntervalSince1970: 1_795_253_400)
    static let utc = TimeZone(identifier: "UTC")!
    /// A terminal wide enough for every column.
    static let wide = Size(width: 120, height: 30)

    static func id(_ number: Int) -> FlowID {
        FlowID(String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    static func hello(app: String = "orders-service", pid: Int = 4242) -> Hello {
        Hello(agentName: "CaptureAgent", agentVersion: "0.1.0", appName: app, processID: pid, hostName: "build-7")
    }

    static func started(
        _ number: Int,
        method: String = "GET",
        url: String? = nil,
        headers: [HTTPHeader] = [HTTPHeader(name: "Accept", value: "application/json")],
        body: CapturedBody? = nil,
        at offset: Double? = nil
    ) -> NetworkLog {
        NetworkLog(
            id: id(number),
            request: Request(method: method, url: url ?? "https://api.example.com/v1/items/\(number)?page=2", headers: headers, body: body),
            timing: Timing(startedAt: epoch.addingTimeInterval(offset ?? Double(number)))
        )
    }

    static func finished(
        _ number: Int,
        status: Int = 200,
        body: String = #"{"id":1,"name":"Zoë","tags":["a","b"],"ok":true,"price":12.5,"none":null}"#,
        bytes: [UInt8]? = nil,
        contentType: String = "application/json",
        duration: Double = 0.120,
        at offset: Double? = nil
    ) -> FlowFinished {
        let data = bytes.map { Data($0) } ?? Data(body.utf8)
        return FlowFinished(
            id: id(number),
            state: .completed,
            response: Response(
                statusCode: status,
                headers: [HTTPHeader(name: "Content-Type", value: contentType), HTTPHeader(name: "Cache-Control", value: "no-store")],
                body: CapturedBody(data: data),
                mimeType: contentType
            ),
            timing: Timing(
                startedAt: epoch.addingTimeInterval(offset ?? Double(number)),
                requestSent: duration * 0.1,
                firstResponseByte: duration * 0.7,
                finished: duration
            )
        )
    }

    static func failed(_ number: Int) -> FlowFinished {
        FlowFinished(
            id: id(number),
            state: .failed,
            error: FlowError(domain: "NSURLErrorDomain", code: -1001, message: "The request timed out."),
            timing: Timing(startedAt: epoch.addingTimeInterval(Double(number)), requestSent: 0.001, finished: 60)
        )
    }

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
