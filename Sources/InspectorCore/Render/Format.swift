import FlowFilter
import Foundation
import WireProtocol

/// Formatting of sizes, durations and times for the screen.
package enum Format {
    /// A byte count in at most 7 columns: `512 B`, `1.5 KiB`, `23 MiB`.
    package static func size(_ bytes: Int) -> String {
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < sizeUnits.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        return value < 10 ? "\(fixed(value, decimals: 1)) \(sizeUnits[unit])" : "\(Int(value.rounded())) \(sizeUnits[unit])"
    }

    private static let sizeUnits = ["B", "KiB", "MiB", "GiB", "TiB"]

    /// A duration in at most 6 columns: `850µs`, `12ms`, `1.25s`, `42.1s`, `3m07s`.
    static func duration(_ seconds: Double) -> String {
        switch seconds {
        case ..<0.001: return "\(Int((seconds * 1_000_000).rounded()))µs"
        case ..<1: return "\(Int((seconds * 1000).rounded()))ms"
        case ..<10: return fixed(seconds, decimals: 2) + "s"
        case ..<60: return fixed(seconds, decimals: 1) + "s"
        default:
            let total = Int(seconds.rounded())
            return "\(total / 60)m\(zeroPadded(total % 60, width: 2))s"
        }
    }

    /// A date and time for a file name, local to `zone`: `20261129-034712`.
    static func fileStamp(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = [(parts.year ?? 0, 4), (parts.month ?? 0, 2), (parts.day ?? 0, 2)]
        let time = [(parts.hour ?? 0, 2), (parts.minute ?? 0, 2), (parts.second ?? 0, 2)]
        return day.map { zeroPadded($0.0, width: $0.1) }.joined() + "-" + time.map { zeroPadded($0.0, width: $0.1) }.joined()
    }

    /// A duration in the detail view's columns: milliseconds with one
    /// decimal below a second (`12.3 ms`), else seconds as the list writes
    /// them (`3.00 s`, not `3002.3 ms`).
    static func milliseconds(_ seconds: Double) -> String {
        seconds < 0.99995 ? fixed(seconds * 1000, decimals: 1) + " ms" : fixed(seconds, decimals: seconds < 10 ? 2 : 1) + " s"
    }

    /// Wall-clock time of day, `HH:mm:ss`, or `HH:mm:ss.SSS` with milliseconds.
    static func time(_ date: Date, in zone: TimeZone, milliseconds: Bool = false) -> String {
        let local = date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))
        let whole = Int(local.rounded(.down))
        let seconds = ((whole % 86_400) + 86_400) % 86_400
        let millis = min(999, Int(((local - Double(whole)) * 1000).rounded(.down)))
        // Written digit by digit into the string's own bytes: the list and
        // `--dump` make one a flow, and joining padded pieces allocates each
        // (docs/BENCHMARKS.md, "Costs behind the code").
        return String(unsafeUninitializedCapacity: milliseconds ? 12 : 8) { text in
            func digits(_ value: Int, count: Int, at offset: Int) {
                var value = value
                for index in (offset ..< offset + count).reversed() {
                    text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            digits(seconds / 3600, count: 2, at: 0)
            text[2] = UInt8(ascii: ":")
            digits(seconds / 60 % 60, count: 2, at: 3)
            text[5] = UInt8(ascii: ":")
            digits(seconds % 60, count: 2, at: 6)
            guard milliseconds else { return 8 }
            text[8] = UInt8(ascii: ".")
            digits(millis, count: 3, at: 9)
            return 12
        }
    }

    /// Date and time with milliseconds and the zone: `2026-11-21 09:43:01.123 UTC`.
    static func timestamp(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let day = zeroPadded(parts.year ?? 0, width: 4) + "-" + zeroPadded(parts.month ?? 0, width: 2) + "-" + zeroPadded(parts.day ?? 0, width: 2)
        let offset = zone.secondsFromGMT(for: date)
        let zoneName = offset == 0 ? "UTC" : "UTC" + (offset < 0 ? "-" : "+") + zeroPadded(abs(offset) / 3600, width: 2) + ":" + zeroPadded(abs(offset) / 60 % 60, width: 2)
        return "\(day) \(time(date, in: zone, milliseconds: true)) \(zoneName)"
    }

    /// The reason phrase of common status codes.
    static func reason(_ code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 207: "Multi-Status"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }

    /// The style of a status code, by class.
    static func style(forStatus code: Int) -> Style {
        switch code {
        case ..<200: .status1xx
        case ..<300: .status2xx
        case ..<400: .status3xx
        case ..<500: .status4xx
        default: .status5xx
        }
    }

    /// Splits a URL into its path-and-query (at least "/"). The route fold
    /// reads a URL's bytes by the same rule (`RouteFolding.writeRoute`, kept
    /// equal by RouteFoldingOfBytesAgreesWithCharactersTests).
    static func pathAndQuery(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let path = rest[slash...]
        return path.hasPrefix("?") ? "/" + path : String(path)
    }

    /// The path and query as a person reads them: percent-escapes decoded
    /// when they form UTF-8 (`/caf%C3%A9` → `/café`), a query's `+` as a
    /// space; filters match this form too (``DecodedText``).
    static func displayPath(of url: String) -> String {
        let raw = pathAndQuery(of: url)
        return DecodedText.url(raw) ?? raw
    }

    /// A MIME type's essence (``MediaType``) without the `application/` prefix.
    static func shortContentType(_ type: String?) -> String {
        let essence = MediaType.essence(of: type) ?? ""
        return essence.hasPrefix("application/") ? String(essence.dropFirst("application/".count)) : essence
    }

    /// The status column: the code, else what became of the flow. One label
    /// per state for the list, the detail title and `--dump`; a flow the app
    /// got an error for (cancelled, killed at a breakpoint even after its
    /// response arrived, failed) never shows a code, which would read as success.
    /// A gRPC call shows its status's name (`NOT_FOUND`) once it has one,
    /// and never the HTTP status that carries it.
    static func statusLabel(_ log: NetworkLog) -> String {
        let code = log.grpc == nil ? log.response.map { String($0.statusCode) } : nil
        if let status = log.grpc?.status { return status.name }
        return switch log.state {
        case .cancelled: "CXL"
        case .failed: "ERR"
        case .pending, .responded: code ?? "…"
        case .completed: code ?? "—"
        }
    }

    /// An error as a person reads it: corelibs Foundation's message for a
    /// URL error is often just "The operation could not be completed.
    /// (NSURLErrorDomain error -999.)", so the common codes get their
    /// meaning, with the domain and code kept after it for searching.
    static func errorText(_ error: FlowError) -> String {
        let meaning: String? = error.domain == "NSURLErrorDomain" ? urlErrorMeanings[error.code] : nil
        let bare = error.message.isEmpty || error.message.contains("\(error.domain) error \(error.code)")
        switch (meaning, bare) {
        case (let meaning?, true): return "\(meaning) (\(error.domain) \(error.code))"
        case (let meaning?, false): return "\(meaning): \(error.message) (\(error.domain) \(error.code))"
        case (nil, _): return "\(error.domain) \(error.code): \(error.message)"
        }
    }

    private static let urlErrorMeanings: [Int: String] = [
        -999: "Cancelled: the app got a cancellation (the task was cancelled, or killed at a breakpoint)",
        -1001: "Timed out",
        -1003: "Host not found",
        -1004: "Could not connect to the server",
        -1005: "The connection was lost",
        -1009: "Not connected to the internet",
        -1200: "TLS handshake failed",
    ]
}

extension Format {
    /// What server replay did to a flow, for its detail view:
    /// "answered from recorded flow 3F2A09C1; nothing went on the network; 12 left".
    static func serverReplay(_ mark: ServerReplayMark) -> String {
        let left = "\(mark.left) left"
        switch mark.extra {
        case "404": return "no recorded response: answered 404 (--server-replay-extra 404); \(left)"
        case "kill": return "no recorded response: failed as a connection reset (--server-replay-extra kill); \(left)"
        default:
            let from = mark.recordedID.map { "recorded flow \($0.description.prefix(8))" } ?? "a recording"
            let waited = mark.waited.map { " after its recorded wait, \(Format.milliseconds($0))" } ?? ""
            return "answered from \(from)\(waited); nothing went on the network; \(left)"
        }
    }
}
