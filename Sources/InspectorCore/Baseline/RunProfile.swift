import Foundation
import WireProtocol

/// One run's traffic by route, as a baseline comparison reads it: each
/// route's count, status classes, durations, the shape of its JSON bodies,
/// the values of the headers a person named, and, for a request the app
/// received, the calls it made (from the cause-and-effect links).
///
/// Routes are named as insights name them (method, host, folded path:
/// ``RouteFolding``), with `← ` before a request the app received. So that
/// two runs whose test servers listened on different ephemeral ports still
/// match, a loopback host (`127.0.0.1`, `::1`, `localhost`) is named
/// `localhost` without its port; other hosts keep theirs, and a mapping
/// renames a baseline's host to the one it is now (`--baseline-host`).
///
/// ```swift
/// let before = RunProfile(flows: try FlowFile.read(path: "baseline.jsonl"))
/// let now = RunProfile(flows: flows)
/// BaselineComparison.changes(from: before, to: now)
/// ```
package struct RunProfile: Sendable {
    /// What a profile keeps besides what every route has.
    package struct Options: Sendable {
        /// Headers whose values are compared (lowercased names).
        var headers: [String] = []
        /// A baseline's host (as in its URLs, `host` or `host:port`) to the host it is now.
        var hostMapping: [String: String] = [:]

        package init(headers: [String] = [], hostMapping: [String: String] = [:]) {
            self.headers = headers.map { $0.lowercased() }
            self.hostMapping = hostMapping
        }
    }

    /// One route of the run.
    package struct Route: Sendable {
        /// `GET localhost/api/users/{id}`, `← POST localhost/checkout`.
        let name: String
        /// A filter expression (the `f` key's language) that shows its flows.
        let filter: String
        var count = 0
        /// Flows by status class: `2xx` … `5xx`, `failed` for no response.
        var statusClasses: [String: Int] = [:]
        var durations = DurationSamples()
        var requestShape = JSONShape()
        var responseShape = JSONShape()
        /// The named headers' values seen, request and response alike.
        var headerValues: [String: Set<String>] = [:]
        /// For a request the app received: the calls its requests made, by
        /// the route called, summed over ``count`` requests.
        var calls: [String: Int] = [:]

        /// Calls to `route` per request received, on average.
        func callsPerRequest(to route: String) -> Double {
            count == 0 ? 0 : Double(calls[route] ?? 0) / Double(count)
        }
    }

    /// Routes by name.
    private(set) var routes: [String: Route] = [:]
    /// Finished flows taken in.
    private(set) var flowCount = 0

    /// The profile of `flows` (unfinished ones are left out).
    package init(flows: [NetworkLog], options: Options = Options()) {
        var routeOfFlow: [FlowID: String] = [:]
        for log in flows where log.state.isFinal {
            let name = Self.routeName(of: log, options: options)
            routeOfFlow[log.id] = name
            flowCount += 1
            var route = routes[name] ?? Route(name: name, filter: Insights.routeFilter(url: log.request.url, method: log.request.method))
            route.add(log, headers: options.headers)
            routes[name] = route
        }
        // A call is counted once its route and its parent's are known.
        for log in flows where log.state.isFinal {
            guard let parent = log.parentID, let parentRoute = routeOfFlow[parent], parentRoute.hasPrefix(Self.inboundMarker),
                  let route = routeOfFlow[log.id] else { continue }
            routes[parentRoute]?.calls[route, default: 0] += 1
        }
        for name in routes.keys { routes[name]?.durations.settle() }
    }

    /// Put before the name of a request the app received, as the list does.
    static let inboundMarker = "← "

    /// The route's name of a flow, its host named as the comparison matches it.
    static func routeName(of log: NetworkLog, options: Options) -> String {
        let url = log.request.url
        let authority = URLAuthority(url: url)
        let given = URLAuthority(host: authority.host.lowercased(), port: authority.port).text
        let host: String
        if let mapped = options.hostMapping[given] ?? options.hostMapping[authority.host.lowercased()] {
            host = mapped
        } else if ["127.0.0.1", "::1", "localhost"].contains(authority.host.lowercased()) {
            host = "localhost"
        } else {
            host = given
        }
        return (log.isInbound ? inboundMarker : "") + log.request.method + " " + host + RouteFolding.route(ofURL: url)
    }
}

extension RunProfile.Route {
    init(name: String, filter: String) {
        self.name = name
        self.filter = filter
    }

    mutating func add(_ log: NetworkLog, headers: [String]) {
        count += 1
        statusClasses[Self.statusClass(of: log), default: 0] += 1
        if let duration = log.timing.duration { durations.add(duration) }
        if let body = log.request.body, !body.isTruncated { requestShape.add(body.data) }
        // Anything but a JSON object or array is left out by the shape itself.
        if let body = log.response?.body, !body.isTruncated { responseShape.add(body.data) }
        for name in headers {
            for header in log.request.headers + (log.response?.headers ?? []) where header.name.lowercased() == name {
                headerValues[name, default: []].insert(header.value)
            }
        }
    }

    static func statusClass(of log: NetworkLog) -> String {
        guard let code = log.response?.statusCode else { return "failed" }
        return "\(code / 100)xx"
    }
}
