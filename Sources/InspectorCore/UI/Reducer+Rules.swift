import Foundation
import WireProtocol

/// The rules view (`R`): list, add, edit, switch on and off, delete and
/// reorder the traffic rules. Every change asks the program to push the
/// rules in force to the agents and to save the book
/// (``Effect/rulesChanged(_:)``); checking a rule, which may read map-local
/// files, is the program's too (``Effect/loadRule(_:)``).
extension Reducer {
    /// The most rules in force at once: what an agent accepts in one message.
    static let maximumRulesInForce = ViewerMessageDecoder.maximumRules

    static func rulesCommand(_ command: Command, in state: inout AppState) -> Effect {
        guard case .rules(let cursor) = state.mode else { return .none }
        let entries = state.rules.entries
        let page = max(1, state.pageHeight - 3)
        func move(to row: Int) { state.mode = .rules(cursor: min(max(0, row), max(0, entries.count - 1))) }
        switch command {
        case .cursorDown: move(to: cursor + 1)
        case .cursorUp: move(to: cursor - 1)
        case .cursorTop: move(to: 0)
        case .cursorBottom: move(to: entries.count - 1)
        case .pageDown: move(to: cursor + page)
        case .pageUp: move(to: cursor - page)
        case .addRule:
            state.prompt = Prompt(purpose: .rule(replacing: nil), text: "")
        case .editRule, .toggleRule, .deleteRule, .moveRuleUp, .moveRuleDown:
            guard entries.indices.contains(cursor) else {
                state.notice = Notice(text: "No rules yet: press a to add one", isError: true)
                return .none
            }
            return ruleCommand(command, at: cursor, in: &state)
        default:
            return commonCommand(command, in: &state)
        }
        return .none
    }

    private static func ruleCommand(_ command: Command, at index: Int, in state: inout AppState) -> Effect {
        let entry = state.rules.entries[index]
        switch command {
        case .editRule:
            state.prompt = Prompt(purpose: .rule(replacing: index), text: entry.text)
        case .toggleRule:
            guard entry.isEnabled else {
                // Switched on, it is checked again and its files read afresh.
                return .loadRule(RuleLoad(kind: entry.kind, spec: entry.spec, target: .enable(index), directory: state.rules.directory))
            }
            state.rules.entries[index].rule = nil
            return rulesChanged("Switched off \(entry.text)", in: &state)
        case .deleteRule:
            state.confirmation = .deleteRule(index)
        case .moveRuleUp, .moveRuleDown:
            let other = command == .moveRuleUp ? index - 1 : index + 1
            guard state.rules.entries.indices.contains(other) else { return .none }
            state.rules.entries.swapAt(index, other)
            state.mode = .rules(cursor: other)
            return rulesChanged("Moved \(entry.text) to position \(other + 1)", in: &state)
        default: break
        }
        return .none
    }

    /// Opens the rules view, keeping its cursor when it is already up.
    static func openRules(in state: inout AppState) {
        state.showsHelp = false
        state.overlay = nil
        if case .rules = state.mode { return }
        state.mode = .rules(cursor: 0)
    }

    /// A rule typed in the prompt or the bar: the kind is checked here, the
    /// rest by the program (``Effect/loadRule(_:)``). Bad text reopens the
    /// prompt with it, so nothing typed is lost.
    static func ruleRequest(_ text: String, replacing index: Int?, in state: inout AppState) -> Effect {
        do {
            let (kind, spec) = try RuleLoader.parseLine(text)
            return .loadRule(RuleLoad(kind: kind, spec: spec, target: index.map(RuleLoad.Target.replace) ?? .add,
                                      directory: state.rules.directory))
        } catch {
            refuse(text, replacing: index, because: error.description, in: &state)
            return .none
        }
    }

    private static func refuse(_ text: String, replacing index: Int?, because reason: String, in state: inout AppState) {
        state.prompt = Prompt(purpose: .rule(replacing: index), text: text)
        state.notice = Notice(text: reason, isError: true)
    }

    static func ruleLoaded(_ request: RuleLoad, _ result: Result<TrafficRule, RuleLoader.RuleError>, in state: inout AppState) -> Effect {
        let retyped: Int?? = switch request.target {
        case .add: .some(nil)
        case .replace(let index): .some(index)
        case .enable: .none
        }
        let rule: TrafficRule
        switch result {
        case .success(let loaded): rule = loaded
        case .failure(let error):
            if let index = retyped {
                refuse(request.text, replacing: index, because: error.description, in: &state)
            } else {
                state.notice = Notice(text: "Cannot switch on \(request.text): \(error.description)", isError: true)
            }
            return .none
        }
        var book = state.rules
        let done: String
        switch request.target {
        case .add:
            book.entries.append(RuleBook.Entry(kind: request.kind, spec: request.spec, rule: rule))
            done = "Added \(request.text)"
        case .replace(let index), .enable(let index):
            guard book.entries.indices.contains(index) else { return .none }
            if case .enable = request.target {
                // The list cannot change between the ask and the answer, but
                // a rule that is no longer the one asked about stays off.
                guard book.entries[index].text == request.text else { return .none }
                book.entries[index].rule = rule
                done = "Switched on \(request.text)"
            } else {
                let wasEnabled = book.entries[index].isEnabled
                book.entries[index].kind = request.kind
                book.entries[index].spec = request.spec
                book.entries[index].rule = wasEnabled ? rule : nil
                done = "Changed rule \(index + 1) to \(request.text)"
            }
        }
        if let problem = tooMuch(book.inForce) {
            if let index = retyped {
                refuse(request.text, replacing: index, because: problem, in: &state)
            } else {
                state.notice = Notice(text: "Cannot switch on \(request.text): \(problem)", isError: true)
            }
            return .none
        }
        state.rules = book
        if case .add = request.target, case .rules = state.mode {
            state.mode = .rules(cursor: book.entries.count - 1)
        }
        return rulesChanged(done, in: &state)
    }

    /// Why a set of rules cannot go to an agent in one message, if it cannot.
    private static func tooMuch(_ rules: [TrafficRule]) -> String? {
        if rules.count > maximumRulesInForce {
            return "at most \(maximumRulesInForce) rules can be on at once; switch one off first"
        }
        let bytes = rules.reduce(0) { $0 + $1.files.reduce(0) { $0 + $1.data.count } }
        if bytes > RuleLoader.maximumLocalBytes {
            return "the map-local files of the rules that are on would come to more than \(RuleLoader.maximumLocalBytes / 1_048_576) MiB, more than one message to an agent holds; switch one off first"
        }
        return nil
    }

    /// `:rules.save [FILE]`: saves to FILE from now on (every rule, the
    /// flags' too, becomes the file's), or to the `--rules` file.
    static func saveRules(to path: String?, in state: inout AppState) -> Effect {
        if let path {
            state.rules.path = path
            for index in state.rules.entries.indices { state.rules.entries[index].origin = .file }
        }
        guard let target = state.rules.path else {
            state.notice = Notice(text: "netinspect started without --rules: give a file, :rules.save FILE", isError: true)
            return .none
        }
        state.notice = Notice(text: "Saving the rules to \(target)", isError: false)
        return .rulesChanged(state.rules)
    }

    /// Reports a change and asks for it to be pushed and saved.
    static func rulesChanged(_ done: String, in state: inout AppState) -> Effect {
        let agents = state.controlledAgents
        let reach = agents == 1 ? "1 agent that accepts control" : "\(agents) agents that accept control"
        let count = state.rules.inForce.count
        let inForce = count == 1 ? "1 rule on" : "\(count) rules on"
        state.notice = Notice(text: "\(done): \(inForce), sent to \(reach)", isError: false)
        return .rulesChanged(state.rules)
    }
}
