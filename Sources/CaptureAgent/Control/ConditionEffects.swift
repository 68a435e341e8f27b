import Foundation
import WireProtocol

/// What a network condition asks an adapter to do to one exchange it lets
/// through (``ExchangeControl/effect``): wait before the response starts
/// (or before a local answer or a failure is given), and pace the bodies.
/// A failure is not here: ``ExchangeControl/start(_:)`` returns it
/// (``ExchangeControl/StartAction/fail(_:)``).
///
/// ```swift
/// switch control.start(request) {
/// case .answer(let response): loop.scheduleTask(in: control.effect.latency) { answer(response) }
/// case .fail(let failure): loop.scheduleTask(in: control.effect.latency) { fail(failure) }
/// case .send(let request): send(request)   // pace with control.effect.down / .up
/// }
/// ```
package struct NetworkEffect: Sendable, Equatable {
    /// Waited once before the response starts, the answer is given or the request fails.
    package var latency: Duration = .zero
    /// The response body's pace, in bytes per second.
    package var downBytesPerSecond: Int?
    /// The request body's pace, in bytes per second.
    package var upBytesPerSecond: Int?

    package init(latency: Duration = .zero, downBytesPerSecond: Int? = nil, upBytesPerSecond: Int? = nil) {
        self.latency = latency
        self.downBytesPerSecond = downBytesPerSecond
        self.upBytesPerSecond = upBytesPerSecond
    }

    /// Nothing to wait for, nothing to pace.
    package static let none = NetworkEffect()

    package var isNone: Bool { self == .none }
}

/// How a request fails without a response, each client reporting it as its
/// own error for the same thing (URLSession's `URLError`, AsyncHTTPClient's).
package enum NetworkFailure: Sendable, Equatable {
    /// The connection was reset (URLSession: `.networkConnectionLost`).
    case reset
    /// The request timed out (URLSession: `.timedOut`).
    case timeout
    /// No network (URLSession: `.notConnectedToInternet`).
    case offline
}

extension NetworkFailure {
    /// The error URLSession reports for the same failure of a real transfer,
    /// for every client that stands on Foundation's errors (URLSession, and
    /// an OpenAPI client whatever its transport): libcurl's receive error on
    /// `ECONNRESET` and its timeouts map to these
    /// codes in corelibs' `_EasyHandle.urlErrorCode(for:)`
    /// (Sources/FoundationNetworking/URLSession/libcurl/MultiHandle.swift),
    /// with the failing URL as `NativeProtocol.failWith` adds it (less its
    /// string twin, which Foundation deprecates). corelibs
    /// never reports `notConnectedToInternet` itself; it is the code Apple's
    /// URLSession gives, and the one apps test for.
    package func urlError(url: URL?) -> URLError {
        let (code, text): (URLError.Code, String) = switch self {
        case .reset: (.networkConnectionLost, "Recv failure: Connection reset by peer")
        case .timeout: (.timedOut, "Operation timed out")
        case .offline: (.notConnectedToInternet, "The Internet connection appears to be offline.")
        }
        var info: [String: Any] = [NSLocalizedDescriptionKey: text]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(code, userInfo: info)
    }
}

/// One `condition` rule's draws: whether each matching request fails, from
/// a generator of its own, advanced once per matching request, so a seed
/// gives the same failures in the same order every run.
package final class ConditionDraws: Sendable {
    private let state: Locked<UInt64>

    package init(seed: UInt64?) {
        state = Locked(seed ?? UInt64.random(in: .min ... .max))
    }

    /// The next draw, in [0, 1).
    package func next() -> Double {
        // SplitMix64: small, fast, and the same sequence on every platform.
        let value = state.withLock { (word: inout UInt64) -> UInt64 in
            word &+= 0x9E37_79B9_7F4A_7C15
            var mixed = word
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
        return Double(value >> 11) / Double(1 << 53)
    }
}

/// A condition rule that matched a request, and what it decides for it.
package struct ConditionMatch: Sendable {
    package var rule: TrafficRule
    package var condition: NetworkCondition
    package var draws: ConditionDraws

    /// What the condition does to this request, given its generator's next
    /// `draw` (in [0, 1): the request fails when it is below the failure's
    /// share), and what the log is to show.
    package func decide(draw: Double) -> (effect: NetworkEffect, failure: NetworkCondition.FailureKind?, applied: AppliedCondition) {
        var failure: NetworkCondition.FailureKind?
        if let chance = condition.failure, draw < chance.share { failure = chance.kind }
        let effect = NetworkEffect(latency: condition.latency,
                                   downBytesPerSecond: failure == nil ? condition.downBitsPerSecond.map { max(1, $0 / 8) } : nil,
                                   upBytesPerSecond: failure == nil ? condition.upBitsPerSecond.map { max(1, $0 / 8) } : nil)
        let milliseconds = Int(NetworkCondition.milliseconds(condition.latency))
        let applied = AppliedCondition(rule: rule.description, latencyMilliseconds: milliseconds > 0 ? milliseconds : nil,
                                       downBitsPerSecond: effect.downBytesPerSecond == nil ? nil : condition.downBitsPerSecond,
                                       upBitsPerSecond: effect.upBytesPerSecond == nil ? nil : condition.upBitsPerSecond,
                                       failure: failure?.description)
        return (effect, failure, applied)
    }
}

/// When the next slice of a paced body may go: each slice is let through
/// when the bandwidth would have carried everything up to its end, so a
/// body of N bytes takes N / rate from its first byte, whatever its slices.
/// A value with no clock: the adapter passes the time in.
///
/// ```swift
/// var pacer = Pacer(bytesPerSecond: 1 << 20)
/// let due = pacer.due(afterSending: slice.count, now: .now())   // wait until `due`, then send
/// ```
package struct Pacer: Sendable {
    package let bytesPerSecond: Int
    private var origin: ContinuousClock.Instant?
    private var sent = 0

    package init(bytesPerSecond: Int) {
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    /// The most to let through at once: a twentieth of a second's worth, so
    /// the pace is smooth, and at least a kilobyte, so a slow one is not all timers.
    package var sliceSize: Int { max(1024, bytesPerSecond / 20) }

    /// When `count` more bytes, starting now or when the last slice was due, have arrived.
    package mutating func due(afterSending count: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let start = origin ?? now
        origin = start
        sent += count
        let seconds = Double(sent) / Double(bytesPerSecond)
        return start + .nanoseconds(Int64(seconds * 1e9))
    }
}

extension ExchangeControl {
    /// A condition's failure as what ``start(_:)`` returns: a status is an
    /// empty answer, the rest fail as the client would.
    static func action(failing kind: NetworkCondition.FailureKind) -> StartAction {
        switch kind {
        case .reset: .fail(.reset)
        case .timeout: .fail(.timeout)
        case .offline: .fail(.offline)
        case .status(let code):
            .answer(ExchangeResponse(statusCode: code, headers: [HTTPHeader(name: "Content-Length", value: "0")], body: Data()))
        }
    }
}
