import Foundation
import WireProtocol

/// The text a streamed completion delivered, joined from its deltas, for
/// the common shapes: OpenAI chat completions (`choices[].delta.content`),
/// OpenAI Responses (`response.output_text.delta` events' `delta`) and
/// Anthropic messages (`content_block_delta` events' `delta.text`).
///
/// ```swift
/// if let llm = LLMStream(events: stream.events) {
///     llm.provider            // .openAIChat
///     llm.text                // "Hello, world"
///     llm.firstEventAt        // seconds from the flow's start to its first event
///     llm.eventsPerSecond
/// }
/// ```
struct LLMStream: Sendable, Equatable {
    /// Which shape the events have.
    enum Provider: String, Sendable {
        case openAIChat = "OpenAI chat completions"
        case openAIResponses = "OpenAI Responses"
        case anthropic = "Anthropic messages"
    }

    /// The shape recognised.
    var provider: Provider
    /// The text joined so far.
    var text: String
    /// The events of that shape (a role-only or empty delta counts too).
    var deltas: Int
    /// When the first event arrived, in seconds since the flow started.
    var firstEventAt: Double?
    /// Dispatched events a second, between the first and the last (nil
    /// with fewer than two timed events).
    var eventsPerSecond: Double?

    /// Recognises the shape from the first event that tells, then joins
    /// every delta of that shape; nil when no event has one.
    init?(events: [ServerSentEvent]) {
        let dispatched = events.filter(\.isDispatched)
        var provider: Provider?
        var text = ""
        var deltas = 0
        for event in dispatched where !event.isDone {
            guard let json = Self.json(event.data) else { continue }
            guard let (shape, delta) = Self.delta(of: json, type: event.event), provider == nil || provider == shape else { continue }
            provider = shape
            text += delta
            deltas += 1
        }
        guard let provider else { return nil }
        self.provider = provider
        self.text = text
        self.deltas = deltas
        let times = dispatched.compactMap(\.at)
        firstEventAt = times.first
        if let first = times.first, let last = times.last, times.count > 1, last > first {
            eventsPerSecond = Double(times.count - 1) / (last - first)
        }
    }

    private static func json(_ text: String) -> JSONValue? {
        guard text.first == "{" else { return nil }
        var text = text
        return text.withUTF8 { try? JSONParser.parse($0) }
    }

    /// The shape and text of one event's delta, when it is one.
    private static func delta(of json: JSONValue, type: String?) -> (Provider, String)? {
        let kind = json["type"]?.stringValue ?? type
        if kind == "response.output_text.delta", let delta = json["delta"]?.stringValue { return (.openAIResponses, delta) }
        if kind == "content_block_delta" {
            guard let delta = json["delta"], let text = delta["text"]?.stringValue else { return (.anthropic, "") }
            return (.anthropic, text)
        }
        if let choices = json["choices"]?.arrayValue {
            let text = choices.compactMap { $0["delta"]?["content"]?.stringValue }.joined()
            guard choices.contains(where: { $0["delta"] != nil }) else { return nil }
            return (.openAIChat, text)
        }
        return nil
    }
}
