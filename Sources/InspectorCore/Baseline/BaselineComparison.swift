import Foundation

/// What changed between a baseline run and this one, route by route
/// (``RunProfile``): routes new and gone, status classes, the shape of JSON
/// bodies, named headers, latency past a threshold, and the calls each
/// received request makes. Changes come sorted by kind, then route.
///
/// ```swift
/// let changes = BaselineComparison.changes(from: RunProfile(flows: before), to: RunProfile(flows: now))
/// changes.first?.detail   // "p50 12 ms → 212 ms, p95 14 ms → 230 ms (8 → 8 flows)"
/// ```
package enum BaselineComparison {
    /// When a route's latency counts as changed.
    package struct Thresholds: Sendable {
        /// Its p50 or its p95 this many times the baseline's. 1.5: run to
        /// run on one machine, a route's p50 moves by a few tens of percent.
        package var ratio = 1.5
        /// And at least this much slower, in seconds. 20 ms: on loopback a
        /// request takes a millisecond or two, so a ratio alone flags
        /// scheduling noise; a real regression is tens of milliseconds.
        package var floor = 0.020
        /// And at least this many flows on each side. 5: a p95 of fewer is
        /// one flow's luck.
        package var samples = 5

        package init() {}
    }

    /// The changes from `baseline` to `current`.
    package static func changes(from baseline: RunProfile, to current: RunProfile, thresholds: Thresholds = Thresholds()) -> [RunChange] {
        var changes: [RunChange] = []
        for (name, route) in current.routes {
            guard let before = baseline.routes[name] else {
                changes.append(RunChange(kind: .routeNew, route: name, detail: "\(route.count) flow\(route.count == 1 ? "" : "s"), none before", filter: route.filter))
                continue
            }
            changes += status(before, route) + shape(before, route) + headers(before, route)
                + latency(before, route, thresholds) + fanOut(before, route)
        }
        for (name, route) in baseline.routes where current.routes[name] == nil {
            changes.append(RunChange(kind: .routeGone, route: name, detail: "\(route.count) flow\(route.count == 1 ? "" : "s") before, none now", filter: nil))
        }
        let order = Dictionary(uniqueKeysWithValues: RunChange.Kind.allCases.enumerated().map { ($1, $0) })
        return changes.sorted { ($0.route, order[$0.kind] ?? 0, $0.detail) < ($1.route, order[$1.kind] ?? 0, $1.detail) }
    }

    private static func status(_ before: RunProfile.Route, _ now: RunProfile.Route) -> [RunChange] {
        let new = Set(now.statusClasses.keys).subtracting(before.statusClasses.keys).sorted()
        guard !new.isEmpty else { return [] }
        let was = before.statusClasses.keys.sorted().joined(separator: ", ")
        let detail = new.map { "\(now.statusClasses[$0] ?? 0) \($0)" }.joined(separator: ", ") + " now, only \(was) before"
        return [RunChange(kind: .status, route: now.name, detail: detail, filter: now.filter)]
    }

    private static func shape(_ before: RunProfile.Route, _ now: RunProfile.Route) -> [RunChange] {
        [("request", before.requestShape, now.requestShape), ("response", before.responseShape, now.responseShape)].compactMap { side, old, new in
            guard old.samples > 0, new.samples > 0 else { return nil }
            var parts: [String] = []
            // Required on one side and never seen on the other: an optional field is not a change.
            // Nor is one under a key that is now only null (a nullable array or object).
            func underNull(_ pointer: String) -> Bool {
                new.paths.contains { key, path in pointer.hasPrefix(key + "/") && path.kinds == [.null] }
            }
            let removed = old.paths.keys.filter { old.isRequired($0) && new.paths[$0] == nil && !underNull($0) }.sorted()
            let added = new.paths.keys.filter { new.isRequired($0) && old.paths[$0] == nil }.sorted()
            let retyped = new.paths.keys.filter { pointer in
                let (was, current) = (old.types(at: pointer), new.types(at: pointer))
                return !was.isEmpty && !current.isEmpty && was.isDisjoint(with: current)
            }.sorted()
            // A key under one removed or added is part of it.
            func tops(_ pointers: [String]) -> [String] { pointers.filter { pointer in !pointers.contains { pointer.hasPrefix($0 + "/") } } }
            if !tops(removed).isEmpty { parts.append("removed " + tops(removed).map { describe($0, in: old) }.joined(separator: ", ")) }
            if !tops(added).isEmpty { parts.append("added " + tops(added).map { describe($0, in: new) }.joined(separator: ", ")) }
            if !retyped.isEmpty {
                parts.append("of another type " + retyped.map { "\($0) (\(kinds(old, $0)) → \(kinds(new, $0)))" }.joined(separator: ", "))
            }
            guard !parts.isEmpty else { return nil }
            return RunChange(kind: .shape, route: now.name, detail: "\(side) body: " + parts.joined(separator: "; "), filter: now.filter)
        }
    }

    private static func describe(_ pointer: String, in shape: JSONShape) -> String { "\(pointer) (\(kinds(shape, pointer)))" }

    private static func kinds(_ shape: JSONShape, _ pointer: String) -> String {
        (shape.paths[pointer]?.kinds ?? []).sorted().map(\.rawValue).joined(separator: "|")
    }

    private static func headers(_ before: RunProfile.Route, _ now: RunProfile.Route) -> [RunChange] {
        let names = Set(before.headerValues.keys).union(now.headerValues.keys).sorted()
        return names.compactMap { name in
            let (was, current) = (before.headerValues[name] ?? [], now.headerValues[name] ?? [])
            guard was != current else { return nil }
            func values(_ set: Set<String>) -> String { set.isEmpty ? "absent" : set.sorted().map { "'\($0)'" }.joined(separator: ", ") }
            return RunChange(kind: .header, route: now.name, detail: "\(name): \(values(was)) → \(values(current))", filter: now.filter)
        }
    }

    private static func latency(_ before: RunProfile.Route, _ now: RunProfile.Route, _ thresholds: Thresholds) -> [RunChange] {
        guard before.durations.sorted.count >= thresholds.samples, now.durations.sorted.count >= thresholds.samples else { return [] }
        let slower = [50, 95].contains { p in
            guard let was = before.durations.percentile(p), let current = now.durations.percentile(p) else { return false }
            return current >= was * thresholds.ratio && current - was >= thresholds.floor
        }
        guard slower else { return [] }
        let text = [50, 95].map { p in
            "p\(p) \(milliseconds(before.durations.percentile(p))) → \(milliseconds(now.durations.percentile(p)))"
        }.joined(separator: ", ")
        let detail = text + " (\(before.durations.sorted.count) → \(now.durations.sorted.count) flows)"
        return [RunChange(kind: .latency, route: now.name, detail: detail, filter: now.filter)]
    }

    private static func milliseconds(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        return seconds < 0.010 ? String(format: "%.1f ms", seconds * 1000) : "\(Int((seconds * 1000).rounded())) ms"
    }

    /// More calls a request to a route it called before (at least twice as
    /// many, and one more), a route it did not call, or one it calls no more.
    private static func fanOut(_ before: RunProfile.Route, _ now: RunProfile.Route) -> [RunChange] {
        guard before.count > 0, now.count > 0 else { return [] }
        let callees = Set(before.calls.keys).union(now.calls.keys).sorted()
        return callees.compactMap { callee in
            let (was, current) = (before.callsPerRequest(to: callee), now.callsPerRequest(to: callee))
            let detail: String
            if was == 0 {
                detail = "calls \(callee) (\(count(current)) a request), which it did not call before"
            } else if current == 0 {
                detail = "no longer calls \(callee) (\(count(was)) a request before)"
            } else if current >= 2 * was, current - was >= 1 {
                detail = "\(count(current)) calls a request to \(callee), \(count(was)) before"
            } else {
                return nil
            }
            return RunChange(kind: .fanOut, route: now.name, detail: detail, filter: now.filter)
        }
    }

    /// 12 as "12", 1.5 as "1.5".
    private static func count(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
