import Foundation

/// A network condition a `condition` rule puts on the flows it matches:
/// latency before the response starts, bodies paced to a bandwidth, and a
/// share of requests that fail. Written as a preset or `key=value` pairs
/// separated by `,` or spaces; a preset first, then pairs that change it.
///
/// | text | what it does |
/// |---|---|
/// | `latency=300ms` | waits this long once, before the response starts (`1.5s` too) |
/// | `down=750kbit` | paces the response body to this bandwidth (`bit`, `kbit`, `mbit`, `gbit`) |
/// | `up=250kbit` | paces the request body to this bandwidth |
/// | `fail=5%:reset` | that share of requests fail: `reset`, `timeout`, `offline` or a status such as `503` |
/// | `seed=42` | the same failures in the same order every run |
/// | `3g` | a preset (``presets``): Firefox DevTools' throttling figures |
///
/// ```swift
/// let condition = try NetworkCondition(spec: "3g, fail=10%:503, seed=7")
/// // condition.latency == 100 ms, condition.failure?.kind == .status(503)
/// ```
///
/// Bandwidths count in Firefox's units, 1 kbit = 1024 bits, so each preset
/// reads back as the pairs it stands for.
public struct NetworkCondition: Sendable, Equatable {
    /// Waited once before the response starts (or a local answer is given); zero for none.
    public var latency: Duration
    /// The response body's pace in bits per second; nil is unpaced.
    public var downBitsPerSecond: Int?
    /// The request body's pace in bits per second; nil is unpaced.
    public var upBitsPerSecond: Int?
    /// The share of matching requests that fail, and how.
    public var failure: Failure?
    /// Makes the failures the same every run; nil draws them at random.
    public var seed: UInt64?

    /// How a failing request fails.
    public enum FailureKind: Sendable, Equatable, CustomStringConvertible {
        /// The connection is lost, as the client reports a reset.
        case reset
        /// The request times out, as the client reports it.
        case timeout
        /// No network at all, as the client reports it.
        case offline
        /// Answered with this status and an empty body.
        case status(Int)

        /// The text `fail=` takes: `reset`, `timeout`, `offline`, or the status.
        public var description: String {
            switch self {
            case .reset: "reset"
            case .timeout: "timeout"
            case .offline: "offline"
            case .status(let code): String(code)
            }
        }
    }

    /// A share of requests and how they fail.
    public struct Failure: Sendable, Equatable {
        /// From 0 (none) to 1 (every one).
        public var share: Double
        /// How each failing request fails.
        public var kind: FailureKind

        /// A share (0...1) of requests failing as `kind`, e.g. `Failure(share: 0.05, kind: .reset)`.
        public init(share: Double, kind: FailureKind) {
            self.share = share
            self.kind = kind
        }
    }

    /// Creates a condition from its parts.
    public init(latency: Duration = .zero, downBitsPerSecond: Int? = nil, upBitsPerSecond: Int? = nil,
                failure: Failure? = nil, seed: UInt64? = nil) {
        self.latency = latency
        self.downBitsPerSecond = downBitsPerSecond
        self.upBitsPerSecond = upBitsPerSecond
        self.failure = failure
        self.seed = seed
    }

    /// The presets, each as the pairs it stands for.
    ///
    /// The figures are Firefox DevTools' throttling profiles, read in
    /// mozilla/gecko-dev, devtools/client/shared/components/throttling/profiles.js
    /// (there in bytes per second with K = 1024; here in the bits they
    /// describe). Firefox's offline profile sends nothing; here every
    /// matching request fails at once as the client reports no network.
    package static let presets: [(name: String, spec: String)] = [
        ("gprs", "latency=500ms down=50kbit up=20kbit"),
        ("2g", "latency=300ms down=250kbit up=50kbit"),
        ("good-2g", "latency=150ms down=450kbit up=150kbit"),
        ("3g", "latency=100ms down=750kbit up=250kbit"),
        ("good-3g", "latency=40ms down=1536kbit up=750kbit"),
        ("4g", "latency=20ms down=4mbit up=3mbit"),
        ("dsl", "latency=5ms down=2mbit up=1mbit"),
        ("wifi", "latency=2ms down=30mbit up=15mbit"),
        ("offline", "fail=100%:offline"),
    ]

    static let example = "'latency=300ms, down=750kbit, fail=5%:reset' or a preset such as '3g'"

    /// Reads a condition's text.
    /// - Throws: ``TrafficRule/SyntaxError`` naming the part it could not read, with an example.
    public init(spec: String) throws(TrafficRule.SyntaxError) {
        self.init()
        let tokens = spec.split { $0 == "," || $0.isWhitespace }.map(String.init)
        guard !tokens.isEmpty else {
            throw TrafficRule.SyntaxError(description: "condition: empty; expected e.g. \(Self.example)")
        }
        for (index, token) in tokens.enumerated() {
            guard let equals = token.firstIndex(of: "=") else {
                guard index == 0, let preset = Self.presets.first(where: { $0.name == token.lowercased() }) else {
                    let names = Self.presets.map(\.name).joined(separator: ", ")
                    let place = index == 0 ? "" : " (a preset comes first)"
                    throw TrafficRule.SyntaxError(description: "condition '\(spec)': '\(token)' is neither key=value nor a preset\(place); presets: \(names); e.g. \(Self.example)")
                }
                self = try NetworkCondition(spec: preset.spec)
                continue
            }
            let key = token[..<equals].lowercased()
            let value = String(token[token.index(after: equals)...])
            try set(key, to: value, in: spec)
        }
    }

    private mutating func set(_ key: String, to value: String, in spec: String) throws(TrafficRule.SyntaxError) {
        func bad(_ what: String, _ example: String) -> TrafficRule.SyntaxError {
            TrafficRule.SyntaxError(description: "condition '\(spec)': \(key)='\(value)' \(what); e.g. \(key)=\(example)")
        }
        switch key {
        case "latency":
            guard let duration = Self.duration(value) else { throw bad("is not a duration", "300ms or 1.5s") }
            latency = duration
        case "down", "up":
            guard let bits = Self.bandwidth(value) else { throw bad("is not a bandwidth (bit, kbit, mbit or gbit per second)", "750kbit") }
            if key == "down" { downBitsPerSecond = bits } else { upBitsPerSecond = bits }
        case "fail":
            guard let failure = Self.failure(value) else { throw bad("is not SHARE%:reset, timeout, offline or a status", "5%:reset") }
            self.failure = failure
        case "seed":
            guard let number = UInt64(value) else { throw bad("is not a whole number", "42") }
            seed = number
        default:
            throw TrafficRule.SyntaxError(description: "condition '\(spec)': unknown key '\(key)'; keys: latency, down, up, fail, seed; e.g. \(Self.example)")
        }
    }

    /// `300ms`, `1.5s`, or a bare number of milliseconds.
    static func duration(_ text: String) -> Duration? {
        let lower = text.lowercased()
        let (number, scale): (Substring, Double) =
            if lower.hasSuffix("ms") { (lower.dropLast(2), 1) } else if lower.hasSuffix("s") { (lower.dropLast(), 1000) } else { (lower[...], 1) }
        guard let value = Double(number), value.isFinite, value >= 0, value * scale < 86_400_000 else { return nil }
        return .milliseconds(Int64((value * scale).rounded()))
    }

    /// `750kbit`, `1.5mbit`: bits per second, above zero.
    static func bandwidth(_ text: String) -> Int? {
        var lower = text.lowercased()
        if lower.hasSuffix("/s") { lower.removeLast(2) }
        if lower.hasSuffix("bps") { lower = String(lower.dropLast(3)) + "bit" }
        let units: [(String, Double)] = [("gbit", 1024 * 1024 * 1024), ("mbit", 1024 * 1024), ("kbit", 1024), ("bit", 1)]
        guard let unit = units.first(where: { lower.hasSuffix($0.0) }),
              let value = Double(lower.dropLast(unit.0.count)), value.isFinite, value > 0
        else { return nil }
        let bits = (value * unit.1).rounded()
        return bits >= 1 && bits < 1e15 ? Int(bits) : nil
    }

    /// `5%:reset`, `100%:timeout`, `10%:503`.
    static func failure(_ text: String) -> Failure? {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, parts[0].hasSuffix("%"), let percent = Double(parts[0].dropLast()),
              percent.isFinite, (0...100).contains(percent)
        else { return nil }
        let kind: FailureKind
        switch parts[1].lowercased() {
        case "reset": kind = .reset
        case "timeout": kind = .timeout
        case "offline": kind = .offline
        default:
            guard let status = Int(parts[1]), (100...599).contains(status) else { return nil }
            kind = .status(status)
        }
        return Failure(share: percent / 100, kind: kind)
    }

    /// The condition as text ``init(spec:)`` reads back, e.g. `latency=300ms down=750kbit`.
    public var spec: String {
        var parts: [String] = []
        if latency > .zero { parts.append("latency=\(Self.milliseconds(latency))ms") }
        if let downBitsPerSecond { parts.append("down=\(Self.bandwidthText(downBitsPerSecond))") }
        if let upBitsPerSecond { parts.append("up=\(Self.bandwidthText(upBitsPerSecond))") }
        if let failure { parts.append("fail=\(Self.percentText(failure.share)):\(failure.kind)") }
        if let seed { parts.append("seed=\(seed)") }
        return parts.joined(separator: " ")
    }

    package static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// `750kbit`, `4mbit`: the largest unit that divides the figure.
    package static func bandwidthText(_ bits: Int) -> String {
        for (unit, scale) in [("gbit", 1 << 30), ("mbit", 1 << 20), ("kbit", 1 << 10)] where bits % scale == 0 {
            return "\(bits / scale)\(unit)"
        }
        return "\(bits)bit"
    }

    static func percentText(_ share: Double) -> String {
        let percent = share * 100
        return percent == percent.rounded() ? "\(Int(percent))%" : "\(percent)%"
    }
}

extension TrafficRule {
    /// A condition rule's parts: `SEP[FILTER]SEP SPEC` or `SEP SPEC`; an
    /// empty filter matches every flow, and the SPEC must read as a ``NetworkCondition``.
    init(condition text: String, parts: [String], separator: Character) throws(SyntaxError) {
        let filter: String
        let spec: String
        switch parts.count {
        case 1: (filter, spec) = ("", parts[0])
        case 2: (filter, spec) = (parts[0], parts[1])
        default:
            throw SyntaxError(description: "condition '\(text)': expected '\(separator)FILTER\(separator)SPEC' (an empty FILTER matches every flow), found \(parts.count) parts; e.g. \(Self.example(.condition))")
        }
        do {
            _ = try NetworkCondition(spec: spec)
        } catch {
            throw SyntaxError(description: error.description.replacingOccurrences(of: "condition '\(spec)'", with: "condition '\(text)'"))
        }
        self.init(kind: .condition, filter: filter.isEmpty ? nil : filter, pattern: spec, replacement: "")
    }
}
