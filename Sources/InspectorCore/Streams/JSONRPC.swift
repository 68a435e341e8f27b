import Foundation
import WireProtocol

/// Recognises JSON-RPC 2.0 exchanges (MCP's streamable HTTP among them), so
/// the list names a call by its method and answer rather than a row of
/// identical `POST /mcp`. The answer is read from a JSON response body or
/// from the response's event stream, whichever the server chose.
///
/// ```swift
/// JSONRPC.summary(of: log)   // "tools/call → result", "initialize → error -32602"
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
    }

    /// How the server answered.
    enum Answer: Equatable {
        case result
        case error(code: Int, message: String)
    }

    /// The call a request's body makes, when it is JSON-RPC 2.0.
    static func call(of request: Request) -> Call? {
        guard let value = json(request.body?.data) else { return nil }
        let calls = value.arrayValue ?? [value]
        guard let first = calls.first, first["jsonrpc"]?.stringValue == "2.0", let method = first["method"]?.stringValue else { return nil }
        return Call(method: method, id: ID(first["id"]), batchCount: calls.count)
    }

    /// The answer to `call` in the flow's response, as JSON or as an event.
    static func answer(to call: Call, in log: NetworkLog) -> Answer? {
        guard call.id != nil, let response = log.response, let body = response.body, body.data.count <= maximumBody else { return nil }
        if FlowMessages.isEventStream(log) {
            var decoder = ServerSentEventDecoder()
            for event in decoder.feed(body.data, at: nil) where event.isDispatched {
                if let answer = answer(in: json(Data(event.data.utf8)), to: call) { return answer }
            }
            return nil
        }
        return answer(in: json(body.data), to: call)
    }

    /// `tools/call → result`: what the list shows after the path.
    static func summary(of log: NetworkLog) -> String? {
        guard let call = call(of: log.request) else { return nil }
        var text = call.method + (call.batchCount > 1 ? " +\(call.batchCount - 1)" : "")
        switch answer(to: call, in: log) {
        case .result?: text += " → result"
        case let .error(code, _)?: text += " → error \(code)"
        case nil: break
        }
        return text
    }

    private static func answer(in value: JSONValue?, to call: Call) -> Answer? {
        guard let value else { return nil }
        for message in value.arrayValue ?? [value] where ID(message["id"]) == call.id {
            if let error = message["error"] {
                return .error(code: Int(error["code"]?.doubleValue ?? 0), message: error["message"]?.stringValue ?? "")
            }
            if message["result"] != nil { return .result }
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
