import Foundation

/// One difference between a run and its baseline, on one route: what
/// `--baseline` prints, a table row on standard error and a JSON line, and
/// what `--fail-on-change` fails on.
///
/// ```swift
/// RunChange(kind: .latency, route: "GET localhost/api/search", detail: "p50 12 ms → 212 ms", filter: "~m \"GET\" & …")
/// ```
package struct RunChange: Sendable, Equatable, Codable {
    /// What changed.
    package enum Kind: String, Sendable, CaseIterable, Codable {
        /// A route this run has and the baseline had not.
        case routeNew = "route-new"
        /// A route the baseline had and this run has not.
        case routeGone = "route-gone"
        /// A status class the route did not answer with before (a 2xx route now answering 5xx).
        case status
        /// Key paths of a JSON body added, removed, or of another type.
        case shape
        /// A named header's values.
        case header
        /// The route's p50 or p95, past the thresholds.
        case latency
        /// The calls a received request makes: more of them (an N+1), a new callee, one no longer called.
        case fanOut = "fan-out"
    }

    package var kind: Kind
    /// The route, as insights name it (``RunProfile``).
    var route: String
    /// What changed, in words: `p50 12 ms → 212 ms, p95 14 ms → 230 ms (8 → 8 flows)`.
    var detail: String
    /// A filter expression that shows this run's flows behind the change
    /// (nil for a route gone: none of its flows are in this run).
    var filter: String?

    init(kind: Kind, route: String, detail: String, filter: String?) {
        self.kind = kind
        self.route = route
        self.detail = detail
        self.filter = filter
    }

    /// The change as one line of JSON: `{"detail":…,"filter":…,"kind":"latency","route":…}`.
    package func jsonLine() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings only: encoding cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The kinds `--fail-on-change` names, comma-separated (`all` for every kind).
    /// - Throws: a message naming the word that is not a kind.
    package static func kinds(parsing text: String) throws(KindsError) -> Set<Kind> {
        var kinds: Set<Kind> = []
        for word in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !word.isEmpty {
            if word == "all" { return Set(Kind.allCases) }
            guard let kind = Kind(rawValue: word) else {
                throw KindsError(description: "'\(word)' is not a change kind (\(Kind.allCases.map(\.rawValue).joined(separator: ", ")), or all)")
            }
            kinds.insert(kind)
        }
        guard !kinds.isEmpty else { throw KindsError(description: "name at least one change kind, or all") }
        return kinds
    }

    package struct KindsError: Error, CustomStringConvertible {
        package var description: String
    }
}

/// The changes as a table, for standard error: a heading line, then one
/// line a change, its detail cut to `width`.
package enum RunChangeTable {
    package static func text(_ changes: [RunChange], baseline: String, width: Int = 120) -> [String] {
        guard !changes.isEmpty else { return ["netinspect: no change against the baseline \(baseline)"] }
        var lines = ["netinspect: \(changes.count) change\(changes.count == 1 ? "" : "s") against the baseline \(baseline):"]
        let kindWidth = changes.map(\.kind.rawValue.count).max() ?? 0
        let routeWidth = min(48, changes.map { $0.route.count }.max() ?? 0)
        for change in changes {
            let route = change.route.count > routeWidth ? String(change.route.prefix(routeWidth - 1)) + "…" : change.route
            let line = "  " + change.kind.rawValue.padding(toLength: kindWidth, withPad: " ", startingAt: 0) + "  "
                + route.padding(toLength: routeWidth, withPad: " ", startingAt: 0) + "  " + change.detail
            lines.append(line.count > width ? String(line.prefix(width - 1)) + "…" : line)
        }
        return lines
    }
}
