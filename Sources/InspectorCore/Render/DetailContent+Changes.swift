import Foundation
import WireProtocol

/// The lines that say what changed a flow: rules, edits, replays, server
/// replay and network conditions.
extension DetailContent {
    /// What traffic rules did, so a mapped or mocked exchange is never
    /// mistaken for the app's own.
    static func changeLines(_ changes: FlowChanges, request: WireProtocol.Request, source: CaptureSource? = nil) -> [StyledLine] {
        var lines: [StyledLine] = [""]
        if changes.composed == true {
            let by = source?.client.rawValue == OwnRequest.clientName ? "netinspect itself (no app allowed control)"
                : "the app's agent, through its \(source?.client.rawValue ?? "client")"
            lines.append(StyledLine([Span("Composed ", .warning), Span("a request you wrote, sent by \(by)")]))
        }
        if let origin = changes.replayOf {
            let by = source?.client.rawValue == OwnRequest.clientName ? "by netinspect itself (the app never saw it)" : "by the app's agent"
            lines.append(StyledLine([Span("Replay ", .warning), Span("sent again \(by), at your request, from flow \(origin)")]))
        }
        if let original = changes.originalURL {
            lines.append(StyledLine([Span("Mapped ", .warning), Span("the app asked for "), Span(original)]))
        }
        if let path = changes.mockedFrom {
            lines.append(StyledLine([Span("Mocked ", .warning), Span("answered from \(path); nothing went on the network")]))
        }
        if let replay = changes.serverReplay {
            lines.append(StyledLine([Span("Server replay ", .warning), Span(Format.serverReplay(replay))]))
        }
        if let condition = changes.condition {
            lines.append(StyledLine([Span("Condition ", .warning), Span("\(condition.summary), by the rule \(condition.rule)")]))
        }
        if let edited = changes.edited, !edited.isEmpty {
            let what = edited.map(\.rawValue).joined(separator: " and ")
            lines.append(StyledLine([Span("Edited ", .warning), Span("by you: the \(what), at a breakpoint or before a replay")]))
        }
        if let original = changes.originalResponse {
            lines.append(StyledLine([Span("Edited ", .warning), Span("response: the server answered \(original.statusCode) \(Format.reason(original.statusCode)); the app got your version")]))
        }
        if let method = changes.originalMethod {
            lines.append(StyledLine([Span("Edited ", .warning), Span("method: the app's was \(method), \(request.method) was sent")]))
        }
        if let headers = changes.originalHeaders, let summary = headerChanges(from: headers, to: request.headers) {
            lines.append(StyledLine([Span("Edited ", .warning), Span("headers: " + summary)]))
        }
        if let body = changes.originalBody {
            let before = body.size == 0 ? "none" : Format.size(body.size)
            let after = request.body.map { Format.size($0.size) } ?? "none"
            lines.append(StyledLine([Span("Edited ", .warning), Span("body: the app's was \(before), \(after) was sent")]))
        }
        for rule in changes.rules { lines.append(StyledLine("rule \(rule)", .dim)) }
        return lines
    }

    /// Which header names an edit or a rule added, removed or changed, by
    /// name only (values can be long or secret); nil when none did.
    static func headerChanges(from original: [HTTPHeader], to sent: [HTTPHeader]) -> String? {
        func values(_ headers: [HTTPHeader]) -> [String: [String]] {
            Dictionary(grouping: headers, by: { $0.name.lowercased() }).mapValues { $0.map(\.value) }
        }
        let before = values(original), after = values(sent)
        // Named as the message that has them writes them.
        let names = Dictionary((original + sent).map { ($0.name.lowercased(), $0.name) }, uniquingKeysWith: { first, _ in first })
        let list = { (keys: [String]) in keys.sorted().compactMap { names[$0] }.joined(separator: ", ") }
        let added = after.keys.filter { before[$0] == nil }
        let removed = before.keys.filter { after[$0] == nil }
        let changed = after.keys.filter { before[$0] != nil && before[$0] != after[$0] }
        let parts = [("added", added), ("removed", removed), ("changed", changed)].filter { !$0.1.isEmpty }.map { "\($0.0) \(list($0.1))" }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
