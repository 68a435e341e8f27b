import ArgumentParser
import Foundation
import InspectorCore
import WireProtocol

/// `--baseline` and the options that shape the comparison: what changed
/// since a good run, route by route (docs/GUIDE.md, "Compare with a baseline").
struct BaselineFlags: ParsableArguments {
    @Option(name: .customLong("baseline"), help: ArgumentHelp(
        "Compare this run's flows with a recorded run's (a --save file or a HAR file), route by route, and list what changed at the end: routes new and gone, status classes, the shape of JSON bodies, latency, the calls each received request makes. Headless (--dump, --json) at the end; in the terminal, in the insights view's changes tab (s, then tab).",
        valueName: "file"), completion: .file())
    var file: String?

    @Option(name: .customLong("baseline-headers"), help: ArgumentHelp(
        "Also compare these headers' values, comma-separated, e.g. content-type,cache-control.", valueName: "names"))
    var headers: String?

    @Option(name: .customLong("baseline-host"), help: ArgumentHelp(
        "The baseline's host OLD is this run's NEW: 'OLD=NEW' (host or host:port). Repeatable. Loopback hosts match whatever their port without it.",
        valueName: "old=new"))
    var hosts: [String] = []

    @Option(name: .customLong("baseline-latency"), help: ArgumentHelp(
        "A route is slower when its p50 or p95 is this many times the baseline's (and --baseline-latency-floor slower).", valueName: "ratio"))
    var latencyRatio: Double = BaselineComparison.Thresholds().ratio

    @Option(name: .customLong("baseline-latency-floor"), help: ArgumentHelp(
        "…and at least this many milliseconds slower: on loopback a ratio alone flags scheduling noise.", valueName: "ms"))
    var latencyFloor: Double = BaselineComparison.Thresholds().floor * 1000

    @Option(name: .customLong("baseline-samples"), help: ArgumentHelp(
        "Compare a route's latency only with at least this many flows on each side.", valueName: "n"))
    var samples: Int = BaselineComparison.Thresholds().samples

    @Option(name: .customLong("changes"), help: ArgumentHelp(
        "Also write the changes as JSON lines to this file ('-': standard output, after the flows).", valueName: "file"), completion: .file())
    var changesFile: String?

    @Option(name: .customLong("fail-on-change"), help: ArgumentHelp(
        "End with status 3 when a change of these kinds is found: route-new, route-gone, status, shape, header, latency, fan-out, comma-separated, or all.",
        valueName: "kinds"))
    var failOnChange: String?

    var options: RunProfile.Options {
        RunProfile.Options(headers: (headers ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
                           hostMapping: Dictionary(hosts.compactMap { pair in
                               let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                               return parts.count == 2 ? (parts[0].lowercased(), parts[1].lowercased()) : nil
                           }, uniquingKeysWith: { _, last in last }))
    }

    var thresholds: BaselineComparison.Thresholds {
        var thresholds = BaselineComparison.Thresholds()
        thresholds.ratio = latencyRatio
        thresholds.floor = latencyFloor / 1000
        thresholds.samples = samples
        return thresholds
    }

    func validate() throws {
        guard file != nil || (headers == nil && hosts.isEmpty && changesFile == nil && failOnChange == nil) else {
            throw ValidationError("--baseline-headers, --baseline-host, --changes and --fail-on-change shape a comparison: add --baseline FILE")
        }
        for pair in hosts where pair.split(separator: "=", maxSplits: 1).count != 2 {
            throw ValidationError("--baseline-host takes OLD=NEW (got '\(pair)')")
        }
        guard latencyRatio >= 1 else { throw ValidationError("--baseline-latency must be 1 or more (got \(latencyRatio))") }
        guard latencyFloor >= 0, samples >= 1 else { throw ValidationError("--baseline-latency-floor must be 0 or more, --baseline-samples 1 or more") }
        if let failOnChange {
            do { _ = try RunChange.kinds(parsing: failOnChange) } catch { throw ValidationError("--fail-on-change: \(error)") }
        }
    }

    /// The baseline read, with the options that shape the comparison; nil without `--baseline`.
    func load() throws -> BaselineView? {
        guard let file else { return nil }
        var view: BaselineView
        do {
            view = BaselineView(name: file, profile: RunProfile(flows: try FlowFile.read(path: file), options: options))
        } catch {
            throw ValidationError("--baseline \(error)")
        }
        view.options = options
        view.thresholds = thresholds
        return view
    }

    /// Compares `flows` with the baseline, says what changed on standard
    /// error (and in `--changes`), and whether a `--fail-on-change` kind was found.
    func report(_ baseline: BaselineView, against flows: [NetworkLog]) throws -> Bool {
        var baseline = baseline
        baseline.compare(with: flows)
        let changes = baseline.changes
        Headless.warn(RunChangeTable.text(changes, baseline: baseline.name).joined(separator: "\n"))
        if let changesFile {
            let lines = changes.reduce(into: Data()) { $0 += $1.jsonLine() + Data("\n".utf8) }
            if changesFile == "-" {
                FileHandle.standardOutput.write(lines)
            } else {
                do { try lines.write(to: URL(fileURLWithPath: changesFile)) } catch { throw ValidationError("--changes \(changesFile): \(error.localizedDescription)") }
            }
        }
        guard let failOnChange, let kinds = try? RunChange.kinds(parsing: failOnChange) else { return false }
        return changes.contains { kinds.contains($0.kind) }
    }
}
