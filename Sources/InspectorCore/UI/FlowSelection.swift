import WireProtocol

/// Which flows a command acts on. A key acts on the focused flow (the
/// selected row, or the flow the detail view shows); the command bar names
/// others as mitmproxy's does (`flow.resume @all`):
///
/// ```
/// :replay @marked      every marked flow, replayed
/// :resume @all         every held flow resumed (what A does)
/// :delete @shown       every flow the filter shows, deleted
/// ```
package enum FlowSelection: String, CaseIterable, Sendable {
    /// The selected row, or the flow the detail view shows.
    case focus = "@focus"
    /// Every marked flow.
    case marked = "@marked"
    /// Every flow the list shows, its filter and search applied.
    case shown = "@shown"
    /// Every flow, shown or not.
    case all = "@all"

    /// The choices the command bar completes, in this order.
    static var names: [String] { allCases.map(\.rawValue) }
}

extension AppState {
    /// The flows `selection` names, in the order the list has them for
    /// `@shown`, oldest first otherwise.
    func flows(_ selection: FlowSelection) -> [Int] {
        let store = session.store
        return switch selection {
        case .focus: focusedFlow.map { store[$0] != nil ? [$0] : [] } ?? []
        case .marked: store.markedSequences
        case .shown: rows.filter { store[$0] != nil }
        case .all: store.sequenceRange.filter { store[$0] != nil }
        }
    }
}

extension Reducer {
    /// The commands that act on one flow, the focused one unless the
    /// command bar names a ``FlowSelection``.
    static let flowCommands: Set<Command> = [
        .copyCurl, .copySwift, .copyHTTPie, .replay, .edit, .resume, .resumeAll, .kill,
        .toggleMark, .editComment, .setDiffBase, .openDiff, .deleteFlow, .duplicateFlow, .saveBody,
    ]

    /// The ones that can act on many flows at once (`:replay @marked`).
    static let manyFlowCommands: Set<Command> = [.replay, .resume, .kill, .toggleMark, .deleteFlow]

    /// Decides which flows `command` acts on, says so when there are none,
    /// and runs it on them: the one place a command finds its target.
    static func onSelectedFlows(_ command: Command, argument: String? = nil, in state: inout AppState) -> Effect {
        var (command, selection, argument) = (command, FlowSelection.focus, argument)
        if command == .resumeAll { (command, selection) = (.resume, .all) }
        if manyFlowCommands.contains(command), let named = argument {
            guard let parsed = FlowSelection(rawValue: named) else {
                let name = CommandBar.entry(for: command)?.alias ?? command.rawValue
                state.notice = Notice(text: "\(name) acts on \(FlowSelection.names.joined(separator: ", ")), not \"\(named)\"", isError: true)
                return .none
            }
            (selection, argument) = (parsed, nil)
        }
        if command == .replay, selection == .focus, let focus = state.focusedFlow,
           state.session.store[focus]?.annotation.isMarked == true, state.session.store.markedSequences.count > 1 {
            // `r` on a marked flow replays every marked one, as a selection of many rows would.
            selection = .marked
        }
        let heldOnly = selection != .focus && (command == .resume || command == .kill)
        let targets = state.flows(selection).filter { !heldOnly || state.session.store[$0]?.hold != nil }
        guard let first = targets.first else {
            state.notice = Notice(text: nothingSelected(selection, heldOnly: heldOnly, in: state), isError: true)
            return .none
        }
        guard selection != .focus else { return onFlow(command, first, argument: argument, in: &state) }
        return onFlows(command, targets, in: &state)
    }

    private static func nothingSelected(_ selection: FlowSelection, heldOnly: Bool, in state: AppState) -> String {
        switch (selection, heldOnly) {
        case (.focus, _): "No flow selected"
        case (.marked, false): "No marked flows (\(state.keyName(.toggleMark)) marks one)"
        case (.marked, true): "No marked flow is held"
        case (.shown, false): "No flow is shown"
        case (.shown, true): "No shown flow is held"
        case (.all, false): "No flows yet"
        case (.all, true): "No flow is held"
        }
    }

    private static func onFlow(_ command: Command, _ target: Int, argument: String?, in state: inout AppState) -> Effect {
        switch command {
        case .copyCurl, .copySwift, .copyHTTPie: copy(command, of: target, in: &state)
        case .replay: replay(target, in: &state)
        case .resume, .kill, .edit: heldFlowCommand(command, on: target, in: &state)
        default: flowCommand(command, on: target, argument: argument, in: &state)
        }
    }

    /// One of ``manyFlowCommands`` on several flows, with one notice for all.
    private static func onFlows(_ command: Command, _ targets: [Int], in state: inout AppState) -> Effect {
        let count = "\(targets.count) flow\(targets.count == 1 ? "" : "s")"
        var effects: [Effect] = []
        switch command {
        case .replay:
            return startReplayJob(targets, count: 1, concurrency: targets.count, in: &state)
        case .toggleMark:
            let mark = !targets.allSatisfy { state.session.store[$0]?.annotation.isMarked == true }
            effects = targets.map { annotate($0, in: &state) { $0.isMarked = mark } }
            state.notice = Notice(text: "\(mark ? "Marked" : "Unmarked") \(count)", isError: false)
        case .deleteFlow:
            for target in targets { _ = flowEdit(.deleteFlow, on: target, argument: nil, in: &state) }
            state.notice = Notice(text: "Deleted \(count)", isError: false)
        default:
            effects = targets.compactMap { target in
                guard let record = state.session.store[target], let agent = liveAgent(of: record, in: state) else { return nil }
                return .control(command == .kill ? .kill(record.log.id) : .resume(FlowResume(id: record.log.id)), to: agent.connection)
            }
            let verb = command == .kill ? "Killed" : "Resumed"
            state.notice = Notice(text: "\(verb) \(effects.count) held flow\(effects.count == 1 ? "" : "s")", isError: false)
        }
        effects.removeAll { $0 == .none }
        return effects.isEmpty ? .none : .batch(effects)
    }
}
