import Foundation

/// What a `condition` rule did to one flow, so a slow or failed exchange is
/// never taken for the network's own doing (``FlowChanges/condition``).
///
/// ```swift
/// let applied = AppliedCondition(rule: "condition |~d api|latency=300ms", latencyMilliseconds: 300)
/// // applied.summary == "+300 ms"
/// ```
public struct AppliedCondition: Sendable, Equatable {
    /// The rule, as its ``TrafficRule/description``.
    public var rule: String
    /// The wait added before the response started (or the answer was given).
    public var latencyMilliseconds: Int?
    /// The pace the response body was held to, in bits per second.
    public var downBitsPerSecond: Int?
    /// The pace the request body was held to, in bits per second.
    public var upBitsPerSecond: Int?
    /// How the condition failed the request (`reset`, `timeout`, `offline`,
    /// or the status it answered); nil when it let the request through.
    public var failure: String?

    /// Creates a record.
    public init(rule: String, latencyMilliseconds: Int? = nil, downBitsPerSecond: Int? = nil,
                upBitsPerSecond: Int? = nil, failure: String? = nil) {
        self.rule = rule
        self.latencyMilliseconds = latencyMilliseconds
        self.downBitsPerSecond = downBitsPerSecond
        self.upBitsPerSecond = upBitsPerSecond
        self.failure = failure
    }

    /// What was done, for people: `+300 ms, paced to 750 kbit/s down, failed by a condition: reset`.
    public var summary: String {
        var parts: [String] = []
        if let latencyMilliseconds { parts.append("+\(latencyMilliseconds) ms") }
        let paces = [downBitsPerSecond.map { "\(Self.rate($0)) down" }, upBitsPerSecond.map { "\(Self.rate($0)) up" }].compactMap { $0 }
        if !paces.isEmpty { parts.append("paced to " + paces.joined(separator: ", ")) }
        if let failure { parts.append("failed by a condition: \(failure)") }
        return parts.isEmpty ? "matched, nothing to do" : parts.joined(separator: ", ")
    }

    static func rate(_ bits: Int) -> String {
        let text = NetworkCondition.bandwidthText(bits)
        guard let unit = text.firstIndex(where: \.isLetter) else { return text }
        return "\(text[..<unit]) \(text[unit...])/s"
    }
}

extension AppliedCondition: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("rule", rule); $0.field("latencyMilliseconds", latencyMilliseconds)
            $0.field("downBitsPerSecond", downBitsPerSecond); $0.field("upBitsPerSecond", upBitsPerSecond)
            $0.field("failure", failure)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(rule: try json.string("rule"), latencyMilliseconds: try json.optionalInt("latencyMilliseconds"),
                  downBitsPerSecond: try json.optionalInt("downBitsPerSecond"), upBitsPerSecond: try json.optionalInt("upBitsPerSecond"),
                  failure: try json.optionalString("failure"))
    }
}
