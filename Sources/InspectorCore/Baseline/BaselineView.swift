import Foundation
import WireProtocol

/// `--baseline` in the terminal: the recorded run's profile, and the
/// changes of the flows in the store against it as of when the insights
/// view's changes tab last looked (profiling every flow is too much to
/// redo for each arriving batch, as insights are; the tab looks again each
/// time it is shown).
///
/// ```swift
/// var baseline = BaselineView(name: "good.jsonl", profile: RunProfile(flows: recorded))
/// baseline.compare(with: store.allRecords.map(\.log))
/// baseline.changes.first?.filter   // what Enter sets the list's filter to
/// ```
package struct BaselineView: Sendable {
    /// The file it was read from, as given.
    package let name: String
    let profile: RunProfile
    package var options = RunProfile.Options()
    package var thresholds = BaselineComparison.Thresholds()
    /// The changes found by the last ``compare(with:)``.
    package private(set) var changes: [RunChange] = []
    /// How many flows that comparison took in.
    private(set) var comparedFlows = 0

    package init(name: String, profile: RunProfile) {
        self.name = name
        self.profile = profile
    }

    /// Compares `flows` with the baseline (the host mapping renames the baseline's hosts only).
    package mutating func compare(with flows: [NetworkLog]) {
        let current = RunProfile(flows: flows, options: RunProfile.Options(headers: options.headers))
        changes = BaselineComparison.changes(from: profile, to: current, thresholds: thresholds)
        comparedFlows = current.flowCount
    }
}
