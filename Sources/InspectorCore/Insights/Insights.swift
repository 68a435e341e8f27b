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

    private var routes = InsightsGroupTable()
    private var hosts = InsightsGroupTable()
    private var services = InsightsGroupTable()
    /// Every flow counted, as one group.
    private(set) var total = InsightsGroup(name: "all", filter: "")
    /// Where a flow's route name is put together, from flow to flow:
    /// making strings was most of the cost of a flow.
    private var scratch: [UInt8] = []
    /// How many bytes of ``scratch`` the last name took.
    private var scratchCount = 0

    package init() {}

    /// Counts a finished flow (call once a flow: when it finishes);
    /// `service` is the app or OpenTelemetry service it came from.
    package mutating func add(_ log: NetworkLog, service: String?) {
        guard log.state.isFinal else { return }
        let url = log.request.url, method = log.request.method
        if let hostBytes = putRouteName(url: url, method: method) {
            let name = scratch[..<scratchCount]
            routes.add(log, asciiName: name, name: { String(decoding: name, as: UTF8.self) }) { _ in
                Self.routeFilter(url: url, method: method)
            }
            hosts.add(log, asciiName: name[hostBytes], name: { String(decoding: name[hostBytes], as: UTF8.self) }, filter: Self.hostFilter)
        } else {
            let host = URLAuthority(url: url).host.lowercased()
            routes.add(log, name: "\(method) \(host)\(RouteFolding.route(ofURL: url))") { _ in Self.routeFilter(url: url, method: method) }
            hosts.add(log, name: host, filter: Self.hostFilter)
        }
        if let service {
            services.add(log, name: service) { "~app \(Self.quoted("^" + RouteFolding.escaped(Substring($0)) + "$"))" }
        }
        total.add(log)
    }

    /// Puts the route group's name of an ASCII URL, `GET api.example.com/users/{id}`,
    /// in ``scratch``'s first ``scratchCount`` bytes (its host lowercased, as a host group's name), and
    /// returns where the host is in it; nil when the URL is not ASCII.
    private mutating func putRouteName(url: String, method: String) -> Range<Int>? {
        var text = url, method = method
        return text.withUTF8 { bytes in
            method.withUTF8 { methodBytes in
                let needed = methodBytes.count + 1 + bytes.count + RouteFolding.routeCapacity(ofURLBytes: bytes.count)
                if scratch.count < needed { scratch = [UInt8](repeating: 0, count: 2 * needed) }
                let written = scratch.withUnsafeMutableBufferPointer { out -> (host: Range<Int>, count: Int)? in
                    var count = 0
                    for byte in methodBytes {
                        out[count] = byte
                        count += 1
                    }
                    out[count] = UInt8(ascii: " ")
                    count += 1
                    let hostStart = count
                    for byte in bytes[URLAuthority.locate(url: bytes).host] {
                        out[count] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                        count += 1
                    }
                    let hostEnd = count
                    guard RouteFolding.writeRoute(ofASCIIURL: bytes, into: out, at: &count) else { return nil }
                    return (hostStart ..< hostEnd, count)
                }
                scratchCount = written?.count ?? 0
                return written?.host
            }
        }
    }

    /// The filter expression that shows a route's flows.
    static func routeFilter(url: String, method: String) -> String {
        let host = URLAuthority(url: url).host.lowercased()
        let route = RouteFolding.route(ofURL: url)
        return "~m \(quoted(method)) & ~u \(quoted(RouteFolding.urlPattern(route: route, host: host)))"
    }

    private static func hostFilter(_ host: String) -> String {
        "~u \(quoted(RouteFolding.urlPattern(route: nil, host: host)))"
    }

    /// Merges the durations of this batch into each group's sorted ones.
    package mutating func settle() {
        total.durations.settle()
        routes.settle()
        hosts.settle()
        services.settle()
    }

    private func groups(_ dimension: Dimension) -> [InsightsGroup] {
        switch dimension {
        case .route: routes.groups
        case .host: hosts.groups
        case .service: services.groups
        }
    }

    /// The groups of a dimension, sorted (largest first; names A to Z).
    func rows(_ dimension: Dimension, by column: Column, ascending: Bool = false) -> [InsightsGroup] {
        let rows = groups(dimension)
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
    let name: String
    /// A filter expression (the `f` key's language) that shows its flows.
    let filter: String
    /// Flows counted.
    private(set) var count = 0
    /// Flows that failed or answered 500 or more.
    private(set) var errors = 0
    /// Request body bytes, as the app sent them.
    private(set) var bytesSent = 0
    /// Response body bytes, as the app received them.
    private(set) var bytesReceived = 0
    /// The sum of the flows' durations, in seconds: the time spent in the group.
    private(set) var impact = 0.0
    /// The durations, for percentiles.
    var durations = DurationSamples()
    /// Flows per duration bucket (``InsightsGroup/bucketBounds``).
    private(set) var histogram = [Int](repeating: 0, count: InsightsGroup.bucketBounds.count + 1)

    /// The upper bounds, in seconds, of the histogram's buckets but the last
    /// (which has none): one a half-decade, as latencies spread over
    /// orders of magnitude.
    static let bucketBounds: [Double] = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3]

    init(name: String, filter: String) {
        self.name = name
        self.filter = filter
    }

    /// The share of its flows that are errors, from 0 to 1.
    var errorRate: Double { count == 0 ? 0 : Double(errors) / Double(count) }

    /// A nearest-rank percentile of its durations (``DurationSamples/percentile(_:)``).
    func percentile(_ p: Int) -> Double? { durations.percentile(p) }

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
