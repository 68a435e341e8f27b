import Foundation
import WireProtocol

/// Something that happened to the UI.
public enum Action: Sendable {
    /// A key was pressed.
    case key(Key)
    /// A command was chosen (what keys turn into through the keymap).
    case command(Command)
    /// The listener reported events, received at the given time.
    case inbox([InboxEvent], at: Date)
    /// The terminal changed size.
    case resize(Size)
    /// The clock moved on (the program sends this; tests choose the time).
    case tick(Date)
    /// The program reports the outcome of an effect (a file written, an error).
    case notify(String, isError: Bool)
    /// Set the filter expression, as `f` does (`--filter` on the command line).
    case applyFilter(String)
    /// Restore marks and comments read from a file (`--read`), by flow id.
    case annotate([FlowID: FlowAnnotation])
    /// A left click at a cell of the screen (where the terminal reports the mouse).
    case click(row: Int, column: Int)
    /// The mouse wheel turned: negative up, positive down, in lines.
    case wheel(Int)
    /// The person closed the editor of an ``Effect/edit(_:)``: the text as
    /// saved, or nil when the editor could not run (`failure` says why).
    case edited(EditSession, text: String?, failure: String?)
    /// The program checked and loaded a rule the rules view asked for
    /// (``Effect/loadRule(_:)``): the rule, or why it cannot be used.
    case ruleLoaded(RuleLoad, Result<TrafficRule, RuleLoader.RuleError>)
    /// The program saved the rules file (``Effect/rulesChanged(_:)``), or could not.
    case rulesSaved(RuleBook.SaveOutcome)
}

/// What the reducer asks of the program after an action.
public enum Effect: Sendable, Equatable {
    /// Nothing; draw the new state.
    case none
    /// Leave the program.
    case quit
    /// Put this text on the terminal's clipboard (OSC 52).
    case copyToClipboard(String)
    /// Write these flows, with their comments and marks, to a HAR file
    /// (a name of the program's choosing when nil) and report back with
    /// ``Action/notify(_:isError:)``.
    case exportHAR([NetworkLog], annotations: [FlowID: FlowAnnotation], path: String?)
    /// Write these flows and annotations as JSON lines (`:save`) and report back.
    case saveFlows(FlowFile.Contents, path: String?)
    /// Marks or comments changed (the new values by flow id): append them
    /// to the `--save` file, if any.
    case annotationsChanged([FlowID: FlowAnnotation])
    /// Send this control message to the agent on this connection.
    case control(ViewerMessage, to: ConnectionID)
    /// Several effects, in order.
    indirect case batch([Effect])
    /// Open this text in the person's `$EDITOR`, then report back with
    /// ``Action/edited(_:text:failure:)``.
    case edit(EditSession)
    /// Check a rule as the flags are checked and read its map-local files,
    /// then report back with ``Action/ruleLoaded(_:_:)``.
    case loadRule(RuleLoad)
    /// The rules changed: send ``RuleBook/inForce`` to every agent that
    /// accepts control (and to those that connect later), save the book to
    /// its file if it has one, and report back with ``Action/rulesSaved(_:)``.
    case rulesChanged(RuleBook)
}

/// Turns actions into state changes. Pure: no I/O, no clock, no terminal;
/// the same state and action always give the same result.
///
/// ```swift
/// var state = AppState()
/// if Reducer.reduce(&state, .key(.character("Q"))) == .quit { exit(0) }
/// ```
public enum Reducer {
    /// The methods `m` cycles through, after "all".
    public static let methodCycle = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    /// The expression of the "errors only" quick filter.
    public static let errorsFilter = "~e"
    /// The expression of the "4xx and 5xx only" quick filter.
    public static let httpErrorsFilter = "~c 4xx | ~c 5xx"

    /// Applies an action to the state.
    public static func reduce(_ state: inout AppState, _ action: Action) -> Effect {
        switch action {
        case .key(let key):
            return handle(key, in: &state)
        case .command(let command):
            state.notice = nil
            return run(command, in: &state)
        case let .inbox(events, date):
            let changes = state.session.apply(events, at: date)
            state.view.apply(changes, from: state.session.store)
            if changes.contains(.cleared) { state.pausedRows = state.pausedRows.map { _ in [] } }
            state.syncCursor()
            return interceptForNewAgents(events, in: state)
        case let .edited(session, text, failure):
            return edited(session, text: text, failure: failure, in: &state)
        case let .notify(text, isError):
            state.notice = Notice(text: text, isError: isError)
            // A notice goes at the next key; an error stays in the event log.
            if isError { state.session.note(text, level: .error, at: state.now ?? Date()) }
            return .none
        case .applyFilter(let text):
            applyFilter(text, in: &state)
            return .none
        case .annotate(let annotations):
            for (id, annotation) in annotations {
                guard let sequence = state.session.store.sequence(of: id) else { continue }
                let changes = state.session.annotate(sequence) { $0 = annotation }
                state.view.apply(changes, from: state.session.store)
            }
            state.syncCursor()
        case let .click(row, column):
            return click(row: row, column: column, in: &state)
        case .wheel(let lines):
            wheel(lines, in: &state)
        case .resize(let size):
            state.size = size
            state.syncCursor()
            state.clampScrolls()
        case .tick(let date):
            state.now = date
        case let .ruleLoaded(request, result):
            return ruleLoaded(request, result, in: &state)
        case .rulesSaved(let outcome):
            state.rules.lastSave = outcome
            if case let .failed(path, reason) = outcome {
                let text = "Could not save the rules to \(path): \(reason); they are in force, not on disk"
                state.notice = Notice(text: text, isError: true)
                state.session.note(text, level: .error, at: state.now ?? Date())
            }
        }
        return .none
    }

    private static func handle(_ key: Key, in state: inout AppState) -> Effect {
        let context = state.keyContext
        if let command = state.keymap.command(for: key, in: context) {
            state.notice = nil
            return run(command, in: &state)
        }
        if context == .prompt, case .character(let character) = key {
            state.prompt?.text.append(character)
        }
        return .none
    }

    private static func run(_ command: Command, in state: inout AppState) -> Effect {
        switch state.keyContext {
        case .prompt: return promptCommand(command, in: &state)
        case .confirm:
            let question = state.confirmation
            state.confirmation = nil
            guard command == .confirmYes else { return .none }
            switch question {
            case .quit: return .quit
            case .deleteRule(let index):
                guard state.rules.entries.indices.contains(index) else { return .none }
                let text = state.rules.entries[index].text
                state.rules.remove(at: index)
                if case .rules(let cursor) = state.mode {
                    state.mode = .rules(cursor: min(cursor, max(0, state.rules.entries.count - 1)))
                }
                return rulesChanged("Deleted \(text)", in: &state)
            case .clearFlows:
                let changes = state.session.clearFlows()
                state.view.apply(changes, from: state.session.store)
                if state.pausedRows != nil { state.pausedRows = [] }
                state.mode = .list
                state.syncCursor()
            case nil: break
            }
            return .none
        case .help: return scrollCommand(command, in: &state)
        case .list: return listCommand(command, in: &state)
        case .detail: return detailCommand(command, in: &state)
        case .rules: return rulesCommand(command, in: &state)
        case .global: return .none
        }
    }

    // MARK: - List

    private static func listCommand(_ command: Command, in state: inout AppState) -> Effect {
        let count = state.rows.count
        let page = state.listHeight
        switch command {
        case .cursorDown: state.moveCursor(to: state.cursor + 1)
        case .cursorUp: state.moveCursor(to: state.cursor - 1)
        case .cursorTop: state.moveCursor(to: 0)
        case .cursorBottom: state.moveCursor(to: count - 1)
        case .pageDown: state.moveCursor(to: state.cursor + page)
        case .pageUp: state.moveCursor(to: state.cursor - page)
        case .open:
            if let selection = state.selection, state.session.store[selection] != nil {
                state.mode = .detail(DetailState(sequence: selection))
            }
        case .search: state.prompt = Prompt(purpose: .search, text: state.searchText ?? "")
        case .filterPrompt: state.prompt = Prompt(purpose: .filter, text: state.filterText ?? "")
        case .errorsOnly: applyFilter(errorsFilter, in: &state)
        case .httpErrorsOnly: applyFilter(httpErrorsFilter, in: &state)
        case .cycleMethod:
            let current = methodCycle.firstIndex { state.filterText == "~m \($0)" }
            let next = current.map { $0 + 1 } ?? 0
            applyFilter(next < methodCycle.count ? "~m \(methodCycle[next])" : nil, in: &state)
        case .clearFilter:
            state.searchText = nil
            state.searchFilter = nil
            applyFilter(nil, in: &state)
        case .cycleSort: state.rebuildView(sortKey: state.view.sortKey.next)
        case .reverseSort: state.rebuildView(reversed: !state.view.isReversed)
        case .togglePause:
            state.pausedRows = state.pausedRows == nil ? state.view.rows : nil
            state.syncCursor()
        case .clearFlows: state.confirmation = .clearFlows
        case .askToQuit: state.confirmation = .quit
        case .copyCurl, .copySwift, .copyHTTPie:
            guard let selection = state.selection else { return .none }
            return copy(command, of: selection, in: &state)
        case .replay:
            guard let selection = state.selection else {
                state.notice = Notice(text: "No flow selected", isError: true)
                return .none
            }
            return replay(selection, in: &state)
        case .intercept, .resume, .resumeAll, .kill, .edit:
            return breakpointCommand(command, on: state.selection, in: &state)
        case .exportHAR:
            let store = state.session.store
            return .exportHAR(state.rows.compactMap { store[$0]?.log }, annotations: store.annotations, path: nil)
        case .toggleMark, .editComment, .setDiffBase, .openDiff:
            guard let selection = state.selection else {
                state.notice = Notice(text: "No flow selected", isError: true)
                return .none
            }
            return flowCommand(command, on: selection, in: &state)
        case .nextMark, .previousMark:
            let marked = Set(state.session.store.markedSequences)
            let rows = state.rows
            let forward = command == .nextMark
            let order = forward ? Array((state.cursor + 1)..<max(state.cursor + 1, rows.count)) + Array(0..<min(state.cursor + 1, rows.count))
                : Array((0..<state.cursor).reversed()) + Array((state.cursor..<rows.count).reversed())
            guard let row = order.first(where: { marked.contains(rows[$0]) }) else {
                state.notice = Notice(text: marked.isEmpty ? "No marked flows (M marks one)" : "No marked flow is shown", isError: true)
                return .none
            }
            state.follows = false
            state.moveCursor(to: row)
        case .markedOnly: applyFilter(markedFilter, in: &state)
        case .clearMarks:
            var changed: [FlowID: FlowAnnotation] = [:]
            for sequence in state.session.store.markedSequences {
                let changes = state.session.annotate(sequence) { $0.isMarked = false }
                state.view.apply(changes, from: state.session.store)
                if let record = state.session.store[sequence] { changed[record.log.id] = record.annotation }
            }
            state.syncCursor()
            return changed.isEmpty ? .none : .annotationsChanged(changed)
        case .toggleFollow:
            state.follows.toggle()
            state.syncCursor()
        default: return commonCommand(command, in: &state)
        }
        return .none
    }

    /// Sets the expression filter from its text (nil clears it). An invalid
    /// expression leaves the previous filter in force and says where it failed.
    static func applyFilter(_ text: String?, in state: inout AppState) {
        let trimmed = text?.trimmingCharacters(in: .whitespaces)
        guard let trimmed, !trimmed.isEmpty else {
            state.filterText = nil
            state.expressionFilter = nil
            state.rebuildView()
            return
        }
        do {
            state.expressionFilter = try FilterExpression.parse(trimmed)
            state.filterText = trimmed
            state.rebuildView()
        } catch {
            state.notice = Notice(
                text: "Invalid filter \"\(trimmed)\" at column \(error.offset + 1): \(error.message)",
                isError: true
            )
        }
    }

    // MARK: - Command bar

    /// Runs a line typed in the command bar and keeps it in the history.
    static func runLine(_ line: String, in state: inout AppState) -> Effect {
        guard !line.isEmpty else { return .none }
        if state.commandHistory.last != line {
            state.commandHistory.append(line)
            if state.commandHistory.count > 100 { state.commandHistory.removeFirst() }
        }
        let command: Command
        let argument: String?
        do {
            (command, argument) = try CommandBar.parse(line)
        } catch {
            state.notice = Notice(text: error.description, isError: true)
            return .none
        }
        let store = state.session.store
        switch command {
        case .filterPrompt where argument != nil:
            applyFilter(argument, in: &state)
        case .intercept where argument != nil:
            return setIntercept(argument ?? "", in: &state)
        case .search where argument != nil:
            state.searchText = argument
            state.searchFilter = argument.map(FilterExpression.freeText)
            state.rebuildView()
        case .sortBy:
            guard let key = argument.flatMap({ SortKey(rawValue: $0.lowercased()) }) else {
                state.notice = Notice(text: "sort needs one of \(SortKey.allCases.map(\.rawValue).joined(separator: ", "))", isError: true)
                return .none
            }
            state.rebuildView(sortKey: key)
        case .chooseColumns:
            guard let argument else {
                state.chosenColumns = nil
                return .none
            }
            let names = argument.split { $0 == "," || $0 == " " }.map { $0.lowercased() }
            let unknown = names.filter { ListColumn(rawValue: $0) == nil }
            guard unknown.isEmpty, !names.isEmpty else {
                state.notice = Notice(text: "Unknown column \(unknown.joined(separator: ", ")); columns are \(ListColumn.allCases.map(\.rawValue).joined(separator: ", "))", isError: true)
                return .none
            }
            state.chosenColumns = names.compactMap(ListColumn.init(rawValue:))
        case .exportHAR:
            return .exportHAR(state.rows.compactMap { store[$0]?.log }, annotations: store.annotations, path: argument)
        case .saveFlows:
            return .saveFlows(FlowFile.Contents(flows: state.rows.compactMap { store[$0]?.log }, annotations: store.annotations), path: argument)
        case .addRule where argument != nil:
            openRules(in: &state)
            return ruleRequest(argument ?? "", replacing: nil, in: &state)
        case .saveRules:
            return saveRules(to: argument, in: &state)
        case .toggleMark, .editComment, .setDiffBase, .openDiff:
            let target: Int? = if case .detail(let detail) = state.mode { detail.sequence } else { state.selection }
            guard let target else {
                state.notice = Notice(text: "No flow selected", isError: true)
                return .none
            }
            return flowCommand(command, on: target, argument: argument, in: &state)
        default:
            return run(command, in: &state)
        }
        return .none
    }

    // MARK: - Mouse

    private static func click(row: Int, column: Int, in state: inout AppState) -> Effect {
        guard state.prompt == nil, state.confirmation == nil, !state.showsHelp, state.overlay == nil else { return .none }
        switch state.mode {
        case .list:
            let index = state.listTop + row - 1
            guard row >= 1, row <= state.listHeight, state.rows.indices.contains(index) else { return .none }
            if index == state.cursor { return run(.open, in: &state) }
            state.follows = false
            state.moveCursor(to: index)
        case .detail(var detail):
            guard row == 1 else { return .none }
            var x = 0
            for tab in DetailTab.allCases {
                let width = DisplayWidth.of(" \(tab.rawValue + 1) \(tab.title) ")
                if column >= x, column < x + width {
                    detail.tab = tab
                    detail.scroll = 0
                    state.mode = .detail(detail)
                }
                x += width + 1
            }
        case .events, .diff, .rules: break
        }
        return .none
    }

    private static func wheel(_ lines: Int, in state: inout AppState) {
        guard state.prompt == nil, state.confirmation == nil else { return }
        if case .list = state.mode, !state.showsHelp, state.overlay == nil {
            state.moveCursor(to: state.cursor + lines)
        } else {
            state.scroll(by: lines)
        }
    }

    // MARK: - Detail

    private static func detailCommand(_ command: Command, in state: inout AppState) -> Effect {
        guard case .detail(var detail) = state.mode else { return .none }
        switch command {
        case .nextTab, .previousTab, .requestTab, .responseTab, .timingTab:
            let all = DetailTab.allCases
            switch command {
            case .nextTab: detail.tab = all[(detail.tab.rawValue + 1) % all.count]
            case .previousTab: detail.tab = all[(detail.tab.rawValue + all.count - 1) % all.count]
            case .requestTab: detail.tab = .request
            case .responseTab: detail.tab = .response
            default: detail.tab = .timing
            }
            detail.scroll = 0
        case .copyCurl, .copySwift, .copyHTTPie:
            return copy(command, of: detail.sequence, in: &state)
        case .replay:
            return replay(detail.sequence, in: &state)
        case .intercept, .resume, .resumeAll, .kill, .edit:
            return breakpointCommand(command, on: detail.sequence, in: &state)
        case .toggleMark, .editComment, .setDiffBase, .openDiff:
            return flowCommand(command, on: detail.sequence, in: &state)
        case .searchBody:
            state.prompt = Prompt(purpose: .bodySearch, text: detail.search ?? "")
            return .none
        case .nextMatch:
            guard let search = detail.search else { return .none }
            detail.scroll = nextMatch(of: search, after: detail.scroll + 1, detail: detail, state: state) ?? detail.scroll
        default:
            return scrollCommand(command, in: &state)
        }
        state.mode = .detail(detail)
        return .none
    }

    private static func nextMatch(of text: String, after line: Int, detail: DetailState, state: AppState) -> Int? {
        let lines = state.detailLines(detail).map(\.text)
        let needle = text.lowercased()
        let ordered = Array(lines.indices[min(line, lines.count)...]) + Array(lines.indices[..<min(line, lines.count)])
        return ordered.first { lines[$0].lowercased().contains(needle) }
    }

    // MARK: - Shared

    /// The expression of the "marked only" quick filter.
    public static let markedFilter = "~marked"

    /// Shows the flow's request as a curl command, Swift code or an HTTPie
    /// command, and asks for it to be copied.
    private static func copy(_ format: Command, of sequence: Int, in state: inout AppState) -> Effect {
        guard let log = state.session.store[sequence]?.log else { return .none }
        let (text, name) = switch format {
        case .copySwift: (SwiftCode.make(for: log.request), "Swift code")
        case .copyHTTPie: (HTTPieCommand.make(for: log.request), "HTTPie command")
        default: (CurlCommand.make(for: log.request), "curl command")
        }
        state.overlay = TextOverlay(title: "\(name), sent to the clipboard with OSC 52  (q or Esc closes)",
                                    lines: text.components(separatedBy: "\n"))
        return .copyToClipboard(text)
    }

    /// Asks the flow's agent to send its request again; the new flow comes
    /// back like any other, marked as a replay. Only an app that allows
    /// control and is still connected can.
    private static func replay(_ sequence: Int, in state: inout AppState) -> Effect {
        guard let record = state.session.store[sequence], canReplay(record, in: &state),
              let agent = controllableAgent(of: record, doing: "replay", in: &state)
        else { return .none }
        state.notice = Notice(text: "Asked \(agent.hello.appName) to replay \(record.log.request.method) \(Format.displayPath(of: record.log.request.url))",
                              isError: false)
        return .control(.replay(record.log.id), to: agent.connection)
    }

    /// Mark, comment and diff, on the selected flow or the one shown.
    private static func flowCommand(_ command: Command, on sequence: Int, argument: String? = nil, in state: inout AppState) -> Effect {
        guard let record = state.session.store[sequence] else { return .none }
        switch command {
        case .toggleMark:
            return annotate(sequence, in: &state) { $0.isMarked.toggle() }
        case .editComment:
            if let argument { return annotate(sequence, in: &state) { $0.comment = argument } }
            state.prompt = Prompt(purpose: .comment(sequence), text: record.annotation.comment ?? "")
        case .setDiffBase:
            state.diffBase = sequence
            state.notice = Notice(text: "Diff base: \(record.log.request.method) \(Format.displayPath(of: record.log.request.url)); select another flow and press D", isError: false)
        case .openDiff:
            let base = state.diffBase.flatMap { state.session.store[$0] != nil && $0 != sequence ? $0 : nil }
                ?? state.session.store.markedSequences.last { $0 != sequence }
            guard let base else {
                state.notice = Notice(text: "No base to compare with: press b on one flow (or mark it with M), then D on another", isError: true)
                return .none
            }
            state.showsHelp = false
            state.mode = .diff(DiffState(base: base, other: sequence))
        default: break
        }
        return .none
    }

    private static func annotate(_ sequence: Int, in state: inout AppState, _ body: (inout FlowAnnotation) -> Void) -> Effect {
        let changes = state.session.annotate(sequence, body)
        guard !changes.isEmpty, let record = state.session.store[sequence] else { return .none }
        state.view.apply(changes, from: state.session.store)
        state.syncCursor()
        return .annotationsChanged([record.log.id: record.annotation])
    }

    /// Scrolling in the detail view, the help overlay and the event log.

    private static func scrollCommand(_ command: Command, in state: inout AppState) -> Effect {
        let page = max(1, state.size.height - 4)
        let delta: Int
        switch command {
        case .cursorDown: delta = 1
        case .cursorUp: delta = -1
        case .pageDown: delta = page
        case .pageUp: delta = -page
        case .cursorTop: delta = Int.min / 2
        case .cursorBottom: delta = Int.max / 2
        default: return commonCommand(command, in: &state)
        }
        state.scroll(by: delta)
        return .none
    }

    static func commonCommand(_ command: Command, in state: inout AppState) -> Effect {
        switch command {
        case .quit: return .quit
        case .back:
            if state.overlay != nil {
                state.overlay = nil
            } else if state.showsHelp {
                state.showsHelp = false
            } else if state.mode != .list {
                state.mode = .list
                state.syncCursor()
            }
        case .toggleHelp:
            state.showsHelp.toggle()
            state.helpScroll = 0
        case .showEvents:
            state.showsHelp = false
            state.mode = .events(scroll: Int.max / 2)
            state.clampScrolls()
        case .commandBar:
            state.prompt = Prompt(purpose: .command, text: "")
        case .openRules:
            openRules(in: &state)
        case .addRule:
            openRules(in: &state)
            state.prompt = Prompt(purpose: .rule(replacing: nil), text: "")
        case .saveRules:
            return saveRules(to: nil, in: &state)
        case .editRule, .toggleRule, .deleteRule, .moveRuleUp, .moveRuleDown:
            state.notice = Notice(text: "That works in the rules view: press R", isError: true)
        default: break
        }
        return .none
    }

    private static func promptCommand(_ command: Command, in state: inout AppState) -> Effect {
        guard let prompt = state.prompt else { return .none }
        switch command {
        case .deleteBackward:
            if !prompt.text.isEmpty { state.prompt?.text.removeLast() }
        case .clearPrompt:
            state.prompt?.text = ""
        case .cancelPrompt:
            state.prompt = nil
        case .completePrompt:
            if prompt.purpose == .command { state.prompt?.text = CommandBar.complete(prompt.text) }
            if case .rule = prompt.purpose, !prompt.text.contains(" ") {
                state.prompt?.text = String(CommandBar.complete("rule " + prompt.text).dropFirst("rule ".count))
            }
        case .historyPrevious, .historyNext:
            guard prompt.purpose == .command, !state.commandHistory.isEmpty else { break }
            let history = state.commandHistory
            let current = prompt.historyIndex ?? history.count
            let next = command == .historyPrevious ? max(0, current - 1) : min(history.count, current + 1)
            var updated = prompt
            if updated.historyIndex == nil { updated.draft = prompt.text }
            updated.historyIndex = next
            updated.text = next < history.count ? history[next] : (updated.draft ?? "")
            state.prompt = updated
        case .acceptPrompt:
            state.prompt = nil
            let text = prompt.text.trimmingCharacters(in: .whitespaces)
            switch prompt.purpose {
            case .command:
                return runLine(text, in: &state)
            case .comment(let sequence):
                return annotate(sequence, in: &state) { $0.comment = text }
            case .rule(let index):
                guard !text.isEmpty else { break }
                return ruleRequest(text, replacing: index, in: &state)
            case .search:
                state.searchText = text.isEmpty ? nil : text
                state.searchFilter = text.isEmpty ? nil : FilterExpression.freeText(text)
                state.rebuildView()
            case .filter:
                applyFilter(text, in: &state)
            case .intercept:
                return setIntercept(text, in: &state)
            case .bodySearch:
                guard case .detail(var detail) = state.mode else { break }
                detail.search = text.isEmpty ? nil : text
                if let search = detail.search {
                    if let line = nextMatch(of: search, after: detail.scroll, detail: detail, state: state) {
                        detail.scroll = line
                    } else {
                        state.notice = Notice(text: "\"\(search)\" not found", isError: true)
                    }
                }
                state.mode = .detail(detail)
                state.clampScrolls()
            }
        default: break
        }
        return .none
    }
}

extension AppState {
    /// Rebuilds the list index after a filter or order change.
    mutating func rebuildView(sortKey: SortKey? = nil, reversed: Bool? = nil) {
        let filters = [searchFilter, expressionFilter].compactMap { $0 }
        let predicate: FlowView.Predicate? = filters.isEmpty ? nil : { @Sendable record in filters.allSatisfy { $0.matches(record.log, marked: record.annotation.isMarked, comment: record.annotation.comment) } }
        view.rebuild(
            from: session.store,
            predicate: predicate,
            sortKey: sortKey ?? view.sortKey,
            reversed: reversed ?? view.isReversed
        )
        if pausedRows != nil { pausedRows = view.rows }
        syncCursor()
    }

    /// Moves the list cursor; moving up stops following.
    mutating func moveCursor(to row: Int) {
        let count = rows.count
        guard count > 0 else { return }
        let target = min(max(0, row), count - 1)
        if target < cursor { follows = false }
        cursor = target
        selection = rows[target]
        scrollListIntoView()
    }

    /// Re-finds the selected flow after the rows changed; under follow,
    /// selects the newest flow.
    mutating func syncCursor() {
        let rows = self.rows
        guard !rows.isEmpty else {
            cursor = 0
            selection = nil
            listTop = 0
            return
        }
        if follows {
            if view.sortKey == .time, pausedRows == nil {
                cursor = view.isReversed ? 0 : rows.count - 1
            } else {
                cursor = rows.indices.max { rows[$0] < rows[$1] } ?? 0
            }
        } else if let selection, let row = row(of: selection) {
            cursor = row
        } else {
            cursor = min(max(0, cursor), rows.count - 1)
        }
        selection = rows[cursor]
        scrollListIntoView()
    }

    private func row(of sequence: Int) -> Int? {
        pausedRows == nil ? view.rowIndex(of: sequence, store: session.store) : pausedRows?.lastIndex(of: sequence)
    }

    private mutating func scrollListIntoView() {
        let height = listHeight
        if cursor < listTop { listTop = cursor }
        if cursor >= listTop + height { listTop = cursor - height + 1 }
        listTop = max(0, min(listTop, max(0, rows.count - height)))
    }

    /// Rows of the detail view, help overlay or event log below their title lines.
    var pageHeight: Int { max(1, size.height - 4) }

    /// Scrolls whatever scrolls in the current mode.
    mutating func scroll(by delta: Int) {
        if var overlay {
            overlay.scroll = overlay.scroll.addingReportingOverflow(delta).partialValue
            self.overlay = overlay
        } else if showsHelp {
            helpScroll = helpScroll.addingReportingOverflow(delta).partialValue
        } else {
            switch mode {
            case .list, .rules: break
            case .detail(var detail):
                detail.scroll = detail.scroll.addingReportingOverflow(delta).partialValue
                mode = .detail(detail)
            case .events(let scroll):
                mode = .events(scroll: scroll.addingReportingOverflow(delta).partialValue)
            case .diff(var diff):
                diff.scroll = diff.scroll.addingReportingOverflow(delta).partialValue
                mode = .diff(diff)
            }
        }
        clampScrolls()
    }

    /// Keeps scroll positions within their content.
    mutating func clampScrolls() {
        func clamp(_ value: Int, lines: Int) -> Int { min(max(0, value), max(0, lines - pageHeight)) }
        helpScroll = clamp(helpScroll, lines: HelpContent.lines(for: keymap).count)
        if var overlay {
            overlay.scroll = clamp(overlay.scroll, lines: overlay.lines.count)
            self.overlay = overlay
        }
        switch mode {
        case .list: break
        case .rules(let cursor):
            mode = .rules(cursor: min(max(0, cursor), max(0, rules.entries.count - 1)))
        case .detail(var detail):
            detail.scroll = clamp(detail.scroll, lines: detailLines(detail).count)
            mode = .detail(detail)
        case .events(let scroll):
            mode = .events(scroll: clamp(scroll, lines: session.events.count))
        case .diff(var diff):
            diff.scroll = clamp(diff.scroll, lines: diffLines(diff).count)
            mode = .diff(diff)
        }
    }
}
