import CaptureAgent
import Foundation
import WireProtocol

/// Section 6: what traffic rules cost a captured request. Every captured
/// request asks the agent's rule store; with no viewer rules that is one
/// lock read, and a request no rule matches pays the URL regexes and filters
/// of every rule. Figures are per request, beside section 1's cost of
/// capture itself.
enum RuleBenchmark {
    static func run(tiny: Bool) throws -> Table {
        let requests = tiny ? 2_000 : 200_000
        let request = ExchangeRequest(method: "POST", url: URL(string: "https://orders.internal.example.com/v1/orders/1234?expand=items")!,
                                      headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                      body: Data(#"{"id":1234}"#.utf8))

        let tenOthers = try (0..<10).map { index -> TrafficRule in
            switch index % 3 {
            case 0: try TrafficRule(.mapRemote, spec: "|api\(index)\\.example\\.org|127.0.0.1:80\(index)")
            case 1: try TrafficRule(.mapLocal, spec: "|~m GET|/static\(index)/|./static")
            default: try TrafficRule(.modifyHeaders, spec: "/~d cdn\(index).example.net/X-Env/staging")
            }
        }
        let cases: [(String, [TrafficRule])] = [
            ("no rules (no viewer, or a viewer without rules)", []),
            ("10 rules, none matching", tenOthers),
            ("10 rules, the last one matching (map remote)", tenOthers + [try TrafficRule(.mapRemote, spec: "|orders\\.internal\\.example\\.com|127.0.0.1:8080")]),
        ]
        var table = Table(title: "6. Traffic rules: cost per captured request (\(formatCount(Double(requests))) requests, best of 5)",
                          columns: ["rules in force", "ns per request"])
        for (name, rules) in cases {
            let store = RuleStore()
            store.replace(with: rules)
            var matched = 0
            let seconds = bestOf(5) {
                matched = 0
                for _ in 0..<requests {
                    if case .unchanged = store.rules.apply(to: request) {} else { matched += 1 }
                }
            }
            precondition(matched == (name.contains("matching (") ? requests : 0), "unexpected \(matched) matches in \(name)")
            table.add([name, format(seconds / Double(requests) * 1e9, 0)])
        }
        // Breakpoints: the check every request pays while control is allowed
        // (one lock read when no viewer asked for them), and the filter test
        // of a request while a filter is set. Holding, and the re-sending
        // path every flow takes while a filter is set, are not in these figures.
        let log = NetworkLog(
            request: Request(method: "POST", url: request.url.absoluteString,
                             headers: [HTTPHeader(name: "Content-Type", value: "application/json")]),
            timing: Timing(startedAt: Date())
        )
        for (name, filter) in [("breakpoints off (control allowed)", nil), ("breakpoints on, filter not matching", "~d api.example.org & ~m POST")] as [(String, String?)] {
            let breakpoints = Breakpoints(timeout: 60)
            breakpoints.intercept(filter)
            var held = 0
            let seconds = bestOf(5) {
                held = 0
                for _ in 0..<requests where breakpoints.isActive && breakpoints.filter?.matches(log) == true { held += 1 }
            }
            precondition(held == 0, "the filter matched")
            table.add([name, format(seconds / Double(requests) * 1e9, 0)])
        }
        return table
    }
}
