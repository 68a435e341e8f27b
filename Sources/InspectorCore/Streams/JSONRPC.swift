import Foundation
import WireProtocol

/// Recognises JSON-RPC 2.0 exchanges (MCP's streamable HTTP among them), so
/// the list names a call by its method and answer rather than a row of
/// identical `POST /mcp`. The call is read from the request body (known as
/// soon as it is sent), the answer and the progress the server reported on
/// the way from a JSON response body or from the response's event stream,
/// whichever the server chose, so a call that streams reads as it goes:
/// `tools/call add · 3/8`, then `tools/call add → result`.
///
/// ```swift
/// JSONRPC.summary(of: log)?.text   // "tools/call add → result", "initialize → error -32602"
/// ```
enum JSONRPC {
    /// Bodies larger than this are not parsed for the list (it is drawn several times a second).
    static let maximumBody = 64 * 1024

    /// A request's id, a string or a number (compared as JSON-RPC does, by value).
    enum ID: Equatable {
        case string(String), number(Double)

        init?(_ value: JSONValue?) {
            if let text = value?.stringValue { self = .string(text) } else if let number = value?.doubleValue { self = .number(number) } else { return nil }
        }
    }

    /// A request: its method (the first of a batch) and id, nil for a notification.
    struct Call: Equatable {
        var method: String
        var id: ID?
        var batchCount: Int
        /// What the method acts on, as MCP names it: a tool's or a prompt's
        /// name, a resource's URI.
        var subject: String?
    }

    /// How the server answered.
    enum Answer: Equatable {
        case result
        /// A result that reports a failure (MCP's `isError: true`: the tool
        /// ran, or was not found, and failed), not a protocol error.
        case toolError
        case error(code: Int, message: String)
    }

    /// What the list shows after the path, and whether the call failed.
    struct Summary: Equatable {
        var text: String
        var isFailure: Bool
    }

    /// The progress notifications (`notifications/progress`) a call's stream
    /// has carried so far, and the last one's figures.
    struct Progress: Equatable {
        var count = 0
        var progress: Double?
        var total: Double?
    }

    /// The call a request's body makes, when it is JSON-RPC 2.0.
    static func call(of request: Request) -> Call? {
        guard let value = json(request.body?.data) else { return nil }
        let calls = value.arrayValue ?? [value]
        guard let first = calls.first, first["jsonrpc"]?.stringValue == "2.0", let method = first["method"]?.stringValue else { return nil }
        let params = first["params"]
        let subject = params?["name"]?.stringValue ?? params?["uri"]?.stringValue
        return Call(method: method, id: ID(first["id"]), batchCount: calls.count, subject: subject)
    }

    /// The answer to `call` in the flow's response, as JSON or as an event,
    /// and the progress reported before it.
    static func answer(to call: Call, in log: NetworkLog) -> (Answer?, Progress) {
        var progress = Progress()
        guard call.id != nil, let response = log.response, let body = response.body, body.data.count <= maximumBody else { return (nil, progress) }
        guard FlowMessages.isEventStream(log) else { return (answer(in: json(body.data), to: call, progress: &progress), progress) }
        var decoder = ServerSentEventDecoder()
        for event in decoder.feed(body.data, at: nil) where event.isDispatched {
            if let answer = answer(in: json(Data(event.data.utf8)), to: call, progress: &progress) { return (answer, progress) }
        }
        return (nil, progress)
    }

    /// `tools/call add → result`, `tools/call add · 3/8` while it runs.
    static func summary(of log: NetworkLog) -> Summary? {
        guard let call = call(of: log.request) else { return nil }
        var text = call.method + (call.subject.map { " " + $0 } ?? "") + (call.batchCount > 1 ? " +\(call.batchCount - 1)" : "")
        let (answer, progress) = answer(to: call, in: log)
        switch answer {
        case .result?: text += " → result"
        case .toolError?: text += " → tool error"
        case let .error(code, _)?: text += " → error \(code)"
        case nil where progress.count > 0: text += " · " + progressText(progress)
        case nil: break
        }
        return Summary(text: text, isFailure: answer.map { $0 != .result } ?? false)
    }

    /// "3/8" when the server says how far of how much, else "3 progress".
    private static func progressText(_ progress: Progress) -> String {
        guard let done = progress.progress, let total = progress.total, total > 0 else { return "\(progress.count) progress" }
        return "\(number(done))/\(number(total))"
    }

    /// 3 as "3", 0.5 as "0.5".
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private static func answer(in value: JSONValue?, to call: Call, progress: inout Progress) -> Answer? {
        guard let value else { return nil }
        for message in value.arrayValue ?? [value] {
            if message["method"]?.stringValue == "notifications/progress" {
                progress.count += 1
                progress.progress = message["params"]?["progress"]?.doubleValue
                progress.total = message["params"]?["total"]?.doubleValue
                continue
            }
            guard ID(message["id"]) == call.id else { continue }
            if let error = message["error"] {
                return .error(code: Int(error["code"]?.doubleValue ?? 0), message: error["message"]?.stringValue ?? "")
            }
            if let result = message["result"] { return result["isError"]?.boolValue == true ? .toolError : .result }
        }
        return nil
    }

    /// A JSON object or array (a JSON-RPC message or batch); nil for anything else.
    private static func json(_ data: Data?) -> JSONValue? {
        guard let data, !data.isEmpty, data.count <= maximumBody,
              let first = data.first(where: { $0 > 0x20 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
        return data.withUnsafeBytes { raw in try? JSONParser.parse(raw.bindMemory(to: UInt8.self)) }
    }
}
