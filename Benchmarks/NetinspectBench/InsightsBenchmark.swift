import Foundation
import InspectorCore
import WireProtocol

/// Section 4's insights rows: the table of every finished flow built at
/// once (`--summary`, or opening a file), and kept up to date per arriving
/// batch (the UI, as its inbox hands flows over) without redoing the whole.
enum InsightsBenchmark {
    static func rows(_ state: AppState, count: Int) -> [[String]] {
        let logs = state.session.store.allRecords.map(\.log).filter { $0.state.isFinal }
        var insights = Insights()
        let build = bestOf(3) {
            insights = Insights()
            for log in logs { insights.add(log, service: "bench-app") }
            insights.settle()
        }
        precondition(insights.count == logs.count)
        var rows = [["insights of \(count) flows (\(logs.count) finished; routes, hosts, services, percentiles)",
                     format(build * 1000, 1) + " ms", "≤ 50 ms"]]

        // One more batch, as the inbox hands them over, into the insights of all the others.
        let batch = Array(logs.suffix(500))
        let update = bestOf(3) {
            var updated = insights
            for log in batch { updated.add(log, service: "bench-app") }
            updated.settle()
        }
        rows.append(["insights: update with a batch of \(batch.count) flows (after \(logs.count))", format(update * 1000, 2) + " ms", "≤ 5 ms"])
        let table = bestOf(3) { _ = InsightsTable.text(insights, width: UIBenchmark.size.width) }
        rows.append(["insights: the table, every group sorted by impact", format(table * 1000, 1) + " ms", "≤ 20 ms"])

        // --baseline at the end of a run: both runs' profiles (JSON shapes
        // of every body included) and the comparison.
        var changes: [RunChange] = []
        let comparison = bestOf(3) {
            changes = BaselineComparison.changes(from: RunProfile(flows: logs), to: RunProfile(flows: logs))
        }
        precondition(changes.isEmpty, "a run compared with itself has no change")
        rows.append(["--baseline: \(logs.count) flows against \(logs.count) (profiles, JSON shapes, changes)", format(comparison * 1000, 0) + " ms", "≤ 2000 ms"])
        return rows
    }
}
