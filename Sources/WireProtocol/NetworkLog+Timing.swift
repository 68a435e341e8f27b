import Foundation

/// When each phase of an exchange happened.
///
/// `startedAt` is a wall-clock date, for display. The other points are offsets
/// in seconds from the start, measured on a monotonic clock by the agent, so a
/// wall-clock step (NTP, a user changing the time) can never make a duration
/// negative. The initializer (and so decoding) keeps the offsets finite,
/// non-negative and in order, `requestSent ≤ firstResponseByte ≤ finished`,
/// and the derived durations are never negative whatever is assigned later.
///
/// On the wire, `startedAt` is seconds since 1970 (a JSON number with a
/// fractional part); offsets are seconds as JSON numbers.
public struct Timing: Codable, Sendable, Equatable {
    /// Wall-clock time at which the task started.
    public var startedAt: Date
    /// Seconds from start until the request (with its body) had been sent.
    public var requestSent: Double?
    /// Seconds from start until the first byte of the response arrived.
    public var firstResponseByte: Double?
    /// Seconds from start until the exchange ended, successfully or not.
    public var finished: Double?

    /// Creates a timing record; offsets are clamped to be non-negative and ordered.
    public init(startedAt: Date, requestSent: Double? = nil, firstResponseByte: Double? = nil, finished: Double? = nil) {
        self.startedAt = startedAt
        let sent = requestSent.map { Swift.max(0, $0.finiteOrZero) }
        let first = firstResponseByte.map { Swift.max(sent ?? 0, $0.finiteOrZero) }
        self.requestSent = sent
        self.firstResponseByte = first
        self.finished = finished.map { Swift.max(first ?? sent ?? 0, $0.finiteOrZero) }
    }

    /// Total duration, once finished.
    public var duration: Double? { finished.map { Swift.max(0, $0) } }

    /// Time spent waiting for the server: request sent → first response byte.
    public var waiting: Double? {
        guard let firstResponseByte else { return nil }
        return Swift.max(0, firstResponseByte - (requestSent ?? 0))
    }

    /// Time spent receiving the response: first byte → finished.
    public var receiving: Double? {
        guard let firstResponseByte, let finished else { return nil }
        return Swift.max(0, finished - firstResponseByte)
    }

    /// The wall-clock date of an offset from the start.
    public func date(at offset: Double) -> Date { startedAt.addingTimeInterval(offset) }

    private enum CodingKeys: String, CodingKey {
        case startedAt, requestSent, firstResponseByte, finished
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            startedAt: Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .startedAt)),
            requestSent: try container.decodeIfPresent(Double.self, forKey: .requestSent),
            firstResponseByte: try container.decodeIfPresent(Double.self, forKey: .firstResponseByte),
            finished: try container.decodeIfPresent(Double.self, forKey: .finished)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(startedAt.timeIntervalSince1970, forKey: .startedAt)
        try container.encodeIfPresent(requestSent, forKey: .requestSent)
        try container.encodeIfPresent(firstResponseByte, forKey: .firstResponseByte)
        try container.encodeIfPresent(finished, forKey: .finished)
    }
}

extension Double {
    fileprivate var finiteOrZero: Double { isFinite ? self : 0 }
}
