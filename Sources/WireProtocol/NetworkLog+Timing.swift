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
public struct Timing: Sendable, Equatable {
    /// Wall-clock time at which the task started.
    public var startedAt: Date
    /// Seconds from start until the request (with its body) had been sent.
    public var requestSent: Double?
    /// Seconds from start until the first byte of the response arrived.
    public var firstResponseByte: Double?
    /// Seconds from start until the exchange ended, successfully or not.
    public var finished: Double?
    /// The transfer's phases as the HTTP client measured them (DNS, connect,
    /// TLS…), when it could tell.
    public var phases: TransferPhases?

    /// Creates a timing record; offsets are clamped to be non-negative and ordered.
    public init(startedAt: Date, requestSent: Double? = nil, firstResponseByte: Double? = nil, finished: Double? = nil,
                phases: TransferPhases? = nil) {
        self.startedAt = startedAt
        self.phases = phases
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
}

/// How long each phase of a transfer took, in seconds, as the HTTP client
/// itself measured it (the names and meaning of HAR's `timings`).
///
/// Every phase is optional: nil when the client did not say, or the phase
/// did not happen (`dns` and `connect` for a reused connection, `tls` for
/// plain HTTP). Negative or non-finite durations become nil.
///
/// ```swift
/// let phases = TransferPhases(dns: 0.002, connect: 0.001, wait: 0.030, receive: 0.004, source: "libcurl")
/// ```
public struct TransferPhases: Sendable, Equatable {
    /// Queued before the transfer could start.
    public var blocked: Double?
    /// Resolving the host name.
    public var dns: Double?
    /// Opening the TCP connection (without TLS).
    public var connect: Double?
    /// The TLS handshake.
    public var tls: Double?
    /// Sending the request.
    public var send: Double?
    /// Waiting for the first byte of the response.
    public var wait: Double?
    /// Receiving the response.
    public var receive: Double?
    /// Who measured them, e.g. `libcurl`.
    public var source: String?

    /// Creates a phase record, dropping durations that are negative or not finite.
    public init(blocked: Double? = nil, dns: Double? = nil, connect: Double? = nil, tls: Double? = nil,
                send: Double? = nil, wait: Double? = nil, receive: Double? = nil, source: String? = nil) {
        func valid(_ value: Double?) -> Double? { value.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } }
        self.blocked = valid(blocked)
        self.dns = valid(dns)
        self.connect = valid(connect)
        self.tls = valid(tls)
        self.send = valid(send)
        self.wait = valid(wait)
        self.receive = valid(receive)
        self.source = source
    }

    /// The phases in transfer order, with their HAR names.
    public var named: [(name: String, seconds: Double?)] {
        [("blocked", blocked), ("dns", dns), ("connect", connect), ("tls", tls), ("send", send), ("wait", wait), ("receive", receive)]
    }
}

extension Double {
    fileprivate var finiteOrZero: Double { isFinite ? self : 0 }
}
