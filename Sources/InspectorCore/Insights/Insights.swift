import FlowFilter
import WireProtocol

/// The shape of the traffic: finished flows grouped by route, by host and
/// by service, each group with its count, error rate, duration percentiles,
/// bytes each way, a histogram and its impact (the time spent in it).
/// Updated as flows arrive (``add(_:service:)``, then ``settle()`` once per
/// batch), never recomputed from the start.
///
/// An error is a flow that failed (no response: refused, timed out, reset)
/// or whose status is 500 or more. A 4xx is not: it is the client's
/// mistake, and often expected (a 404 probe, a 401 before logging in).
///
/// ```swift
/// var insights = Insights()
/// insights.add(flow, service: "checkout")
/// insights.settle()
/// insights.rows(.route, by: .impact).first?.name   // "GET api.example.com/users/{id}"
/// ```
package struct Insights: Sendable {
    /// What flows are grouped by.
    package enum Dimension: String, Sendable, CaseIterable {
        /// Method, host and route (``RouteFolding``): `GET api.example.com/users/{id}`.
        case route
        /// The URL's host.
        case host
        /// The app or OpenTelemetry service that sent the flow (its agent's app name).
        case service
    }

    /// What rows are sorted by (descending, but for the name).
    package enum Column: String, Sendable, CaseIterable {
        case impact, count, errors, p50, p95, p99, sent, received, name
    }

    /// The groups by name, a dictionary a dimension (not one keyed by
    /// dimension: every flow updates three, each in place).
    private var routes: [String: InsightsGroup] = [:]
    private var hosts: [String: InsightsGroup] = [:]
    private var services: [String: InsightsGroup] = [:]
    /// Every flow counted, as one group.
    package private(set) var total = InsightsGroup(name: "all", filter: "")

    package init() {}

    /// Counts a finished flow (call once a flow: when it finishes);
    /// `service` is the app or OpenTelemetry service it came from.
    package mutating func add(_ log: NetworkLog, service: String?) {
        guard log.state.isFinal else { return }
        let url = log.request.url, method = log.request.method
        let (host, routeName) = Self.hostAndRouteName(url: url, method: method)
        Self.add(log, to: &routes, name: routeName) {
            let route = RouteFolding.route(ofURL: url)
            return "~m \(Self.quoted(method)) & ~u \(Self.quoted(RouteFolding.urlPattern(route: route, host: host)))"
        }
        Self.add(log, to: &hosts, name: host) { "~u \(Self.quoted(RouteFolding.urlPattern(route: nil, host: host)))" }
        if let service {
            Self.add(log, to: &services, name: service) { "~app \(Self.quoted("^" + RouteFolding.escaped(Substring(service)) + "$"))" }
        }
        total.add(log)
    }

    /// A URL's host, lowercased, and its route group's name,
    /// `GET api.example.com/users/{id}`. An ASCII URL's are made from its
    /// bytes, the name in one buffer: building them is most of the cost of
    /// a flow.
    private static func hostAndRouteName(url: String, method: String) -> (host: String, routeName: String) {
        var text = url
        let made = text.withUTF8 { bytes -> (String, String)? in
            let located = URLAuthority.locate(url: bytes)
            var name: [UInt8] = []
            name.reserveCapacity(method.utf8.count + bytes.count + 8)
            name += method.utf8
            name.append(UInt8(ascii: " "))
            let hostStart = name.count
            for byte in bytes[located.host] {
                name.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            let hostEnd = name.count
            guard RouteFolding.appendRoute(ofASCIIURL: bytes, to: &name) else { return nil }
            return (String(decoding: name[hostStart ..< hostEnd], as: UTF8.self), String(decoding: name, as: UTF8.self))
        }
        if let made { return made }
        let host = URLAuthority(url: url).host.lowercased()
        return (host, "\(method) \(host)\(RouteFolding.route(ofURL: url))")
    }

    private static func add(_ log: NetworkLog, to groups: inout [String: InsightsGroup], name: String, filter: () -> String) {
        // One lookup, the group updated in place; its filter made once, with the group.
        groups[name, default: InsightsGroup(name: name, filter: filter())].add(log)
    }

    /// Merges the durations of this batch into each group's sorted ones.
    package mutating func settle() {
        total.durations.settle()
        Self.settle(&routes)
        Self.settle(&hosts)
        Self.settle(&services)
    }

    private static func settle(_ groups: inout [String: InsightsGroup]) {
        for index in groups.indices where !groups.values[index].durations.isSettled {
            groups.values[index].durations.settle()
        }
    }

    private func groups(_ dimension: Dimension) -> [String: InsightsGroup] {
        switch dimension {
        case .route: routes
        case .host: hosts
        case .service: services
        }
    }

    /// The groups of a dimension, sorted (largest first; names A to Z).
    package func rows(_ dimension: Dimension, by column: Column, ascending: Bool = false) -> [InsightsGroup] {
        let rows = Array(groups(dimension).values)
        let sorted = rows.sorted { left, right in
            let (a, b) = (left.sortValue(column), right.sortValue(column))
            if a != b { return column == .name ? a < b : a > b }
            return left.name < right.name
        }
        return ascending ? sorted.reversed() : sorted
    }

    /// How many flows were counted.
    package var count: Int { total.count }

    /// The service name of a connection's hello: its app, or the OpenTelemetry `service.name`.
    package static func service(of hello: Hello) -> String? { hello.appName.isEmpty ? nil : hello.appName }

    /// A filter argument in double quotes, its quotes and backslashes escaped.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// One group of the insights: the flows of a route, a host or a service.
package struct InsightsGroup: Sendable, Equatable {
    /// What the group is: `GET api.example.com/users/{id}`, a host, a service.
    package let name: String
    /// A filter expression (the `f` key's language) that shows its flows.
    package let filter: String
    /// Flows counted.
    package private(set) var count = 0
    /// Flows that failed or answered 500 or more.
    package private(set) var errors = 0
    /// Request body bytes, as the app sent them.
    package private(set) var bytesSent = 0
    /// Response body bytes, as the app received them.
    package private(set) var bytesReceived = 0
    /// The sum of the flows' durations, in seconds: the time spent in the group.
    package private(set) var impact = 0.0
    /// The durations, for percentiles.
    package internal(set) var durations = DurationSamples()
    /// Flows per duration bucket (``InsightsGroup/bucketBounds``).
    package private(set) var histogram = [Int](repeating: 0, count: InsightsGroup.bucketBounds.count + 1)

    /// The upper bounds, in seconds, of the histogram's buckets but the last
    /// (which has none): one a half-decade, as latencies spread over
    /// orders of magnitude.
    package static let bucketBounds: [Double] = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3]

    init(name: String, filter: String) {
        self.name = name
        self.filter = filter
    }

    /// The share of its flows that are errors, from 0 to 1.
    package var errorRate: Double { count == 0 ? 0 : Double(errors) / Double(count) }

    /// A nearest-rank percentile of its durations (``DurationSamples/percentile(_:)``).
    package func percentile(_ p: Int) -> Double? { durations.percentile(p) }

    mutating func add(_ log: NetworkLog) {
        count += 1
        if log.state == .failed || (log.response?.statusCode ?? 0) >= 500 { errors += 1 }
        bytesSent += log.request.body?.size ?? 0
        bytesReceived += log.response?.body?.size ?? 0
        if let duration = log.timing.duration {
            impact += duration
            durations.add(duration)
            histogram[Self.bucketBounds.firstIndex { duration < $0 } ?? Self.bucketBounds.count] += 1
        }
    }

    func sortValue(_ column: Insights.Column) -> Double {
        switch column {
        case .impact: impact
        case .count: Double(count)
        case .errors: errorRate
        case .p50: percentile(50) ?? -1
        case .p95: percentile(95) ?? -1
        case .p99: percentile(99) ?? -1
        case .sent: Double(bytesSent)
        case .received: Double(bytesReceived)
        case .name: 0
        }
    }
}
