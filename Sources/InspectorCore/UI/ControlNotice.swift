import Foundation
import InspectorIngest
import WireProtocol

/// The one line that tells a person an app ignores what needs control
/// (traffic rules, conditions, server replay, breakpoints): an agent
/// changes nothing unless its app opted in (`NETINSPECT_CONTROL=1`,
/// `Configuration.allowsControl`), and silence would read as "nothing
/// matched". Headless prints it as the app connects; the UI logs it (`E`)
/// and shows it in the status line.
///
/// ```swift
/// ControlNotice.text(for: hello, ignoring: ["--server-replay"])
/// // "shop (pid 42) does not allow control, so --server-replay does not apply to it: …"
/// ```
package enum ControlNotice {
    /// The line for an app whose agent said `hello`, ignoring `what` (names a person gave: flags, or the UI's words).
    package static func text(for hello: Hello, ignoring what: [String]) -> String {
        "\(hello.appName) (pid \(hello.processID)) does not allow control, so \(listed(what)) \(what.count == 1 ? "does" : "do") not apply to it:"
            + " start it with NETINSPECT_CONTROL=1 (or Configuration.allowsControl = true)"
    }

    /// What needs control in the UI now: the rules in force, a server replay, breakpoints.
    static func inForce(in state: AppState) -> [String] {
        [("the rules", !state.rules.inForce.isEmpty), ("server replay", state.session.serverReplay != nil),
         ("breakpoints", state.interceptFilter != nil)].filter(\.1).map(\.0)
    }

    private static func listed(_ names: [String]) -> String {
        guard let last = names.last, names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + last
    }
}

extension Reducer {
    /// An app that connects without allowing control while something that
    /// needs it is in force: a line in the event log and the status line.
    static func noteAppsWithoutControl(_ events: [InboxEvent], at date: Date, in state: inout AppState) {
        // Every batch passes here: most carry no connection, and cost no more than this look.
        guard events.contains(where: { if case .connected(.agent, let hello, _) = $0 { !hello.acceptsControl } else { false } }) else { return }
        let needing = ControlNotice.inForce(in: state)
        guard !needing.isEmpty else { return }
        for case let .connected(.agent, hello, _) in events where !hello.acceptsControl {
            let text = ControlNotice.text(for: hello, ignoring: needing)
            state.session.note(text, level: .error, at: date)
            state.notice = Notice(text: text, isError: true)
        }
    }
}
