import Foundation
import InspectorIngest
import WireProtocol

/// Something that happened to the UI.
package enum Action: Sendable {
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
    /// A server replay was put in force (its progress) or stopped (nil).
    case serverReplayChanged(ServerReplayProgress?)
    /// The program started this command (`netinspect -- COMMAND`), as typed.
    case commandStarted(String)
    /// The command wrote this to its standard output or error.
    case commandOutput([UInt8])
    /// The command ended: how, in words, and whether with status 0.
    case commandEnded(String, succeeded: Bool)
}

/// What the reducer asks of the program after an action.
package enum Effect: Sendable, Equatable {
    /// Nothing; draw the new state.
    case none
    /// Leave the program.
    case quit
    /// Put this text on the terminal's clipboard (OSC 52).
    case copyToClipboard(String)
    /// Write these flows, with their comments and marks, to a HAR file
    /// and report back with ``Action/notify(_:isError:)``.
    case exportHAR([NetworkLog], annotations: [FlowID: FlowAnnotation], path: String)
    /// Write these flows and annotations as JSON lines (`w`, `:save`) and report back.
    case saveFlows(FlowFile.Contents, path: String)
    /// Marks or comments changed (the new values by flow id): append them
    /// to the `--save` file, if any.
    case annotationsChanged([FlowID: FlowAnnotation])
    /// Send this control message to the agent on this connection.
    case control(ViewerMessage, to: ConnectionID)
    /// Send this request with netinspect's own HTTP client; its flow
    /// arrives through the inbox on ``OwnRequest/connection``.
    case send(OwnRequest)
    /// Write these bytes to a file, then report back with
    /// ``Action/notify(_:isError:)``: `note` on success, else why not.
    case writeFile(Data, path: String, note: String)
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
    /// Read these recordings and answer from them (``ServerReplaySet``);
    /// then ``Action/serverReplayChanged(_:)``, or a notice why not.
    case startServerReplay(paths: [String])
    /// Stop answering from recordings.
    case stopServerReplay
}

/// Turns actions into state changes. Pure: no I/O, no clock, no terminal;
/// the same state and action always give the same result.
///
/// ```swift
/// var state = AppState()
/// if Reducer.reduce(&state, .key(.character("Q"))) == .quit { exit(0) }
/// ```
package enum Reducer {
    /// The methods `m` cycles through, after "all".
    static let methodCycle = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    /// The expression of the "errors only" quick filter.
    static let errorsFilter = "~e"
    /// The expression of the "4xx and 5xx only" quick filter.
    static let httpErrorsFilter = "~c 4xx | ~c 5xx"

    /// Applies an action to the state.
    package static func reduce(_ state: inout AppState, _ action: Action) -> Effect {
        switch action {
        case .key(let key):
            return handle(key, in: &state)
        case .command(let command):
            state.notice = nil
            return run(command, in: &state)
        case let .inbox(events, date):
            let heldBefore = state.session.store.heldSequences()
            let changes = state.session.apply(events, at: date)
            if state.filterLooksAtParents, changes.contains(where: { if case .inserted = $0 { true } else { false } }) {
                // A parent arriving after its children changes their ~parent answer.
                state.rebuildView()
            } else {
                state.view.apply(changes, from: state.session.store)
            }
            if changes.contains(.cleared) { state.pausedRows = state.pausedRows.map { _ in [] } }
            countFinished(events, cleared: changes.contains(.cleared), in: &state)
            state.syncCursor()
            state.followStreamEnd()
            selectFirstHeld(heldBefore: heldBefore, in: &state)
            noteAppsWithoutControl(events, at: date, in: &state)
            let more = followReplayJob(events, in: &state)
            return combined([interceptForNewAgents(events, in: state), more])
        case let .edited(session, text, failure):
            return edited(session, text: text, failure: failure, in: &state)
        case let .notify(text, isError):
            state.notice = Notice(text: text, isError: isError)
            // A notice goes at the next key; an error stays in the event log.
            if isError { state.session.note(text, level: .error, at: state.clock) }
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
        case .commandStarted, .commandOutput, .commandEnded:
            commandAction(action, in: &state)
        case .serverReplayChanged(let progress):
            serverReplayChanged(progress, in: &state)
        case .rulesSaved(let outcome):
            state.rules.lastSave = outcome
            if case let .failed(path, reason) = outcome {
                let text = "Could not save the rules to \(path): \(reason); they are in force, not on disk"
                state.notice = Notice(text: text, isError: true)
                state.session.note(text, level: .error, at: state.clock)
            }
        }
        return .none
    }

    static func handle(_ key: Key, in state: inout AppState) -> Effect {
        let context = state.keyContext
        let command = state.keymap.command(for: key, in: context)
        if state.overlay != nil, !state.showsHelp, context == .help, !(command.map(overlayCommands.contains) ?? false) {
            // A popup (the copied command) closes at the next key, and that
            // key does what it does underneath rather than being swallowed.
            state.overlay = nil
            return handle(key, in: &state)
        }
        if let command {
            state.notice = nil
            return run(command, in: &state)
        }
        if context == .prompt, case .character(let character) = key {
            state.prompt?.type(character)
        }
        return .none
    }

    /// The commands a popup answers itself: scrolling it and closing it.
    private static let overlayCommands: Set<Command> = [
        .cursorUp, .cursorDown, .cursorTop, .cursorBottom, .pageUp, .pageDown, .back, .quit, .toggleHelp,
    ]

    static func run(_ command: Command, in state: inout AppState) -> Effect {
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
                // The insights count the list's flows: a p95 of flows no longer there would be a figure nobody can look into.
                state.insights = Insights()
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
        case .insights: return insightsCommand(command, in: &state)
        case .global: return .none
        }
    }

    /// Scrolling in the detail view, the help overlay and the event log.

    static func scrollCommand(_ command: Command, in state: inout AppState) -> Effect {
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
        case .showOutput:
            showOutput(in: &state)
        case .openInsights:
            state.showsHelp = false
            if case .insights = state.mode { break }
            state.mode = .insights(InsightsViewState())
        case .openRules:
            openRules(in: &state)
        case .addRule:
            openRules(in: &state)
            state.prompt = Prompt(purpose: .rule(replacing: nil), text: "")
        case .saveRules:
            return saveRules(to: nil, in: &state)
        case .newFlow:
            return newFlow(nil, in: &state)
        case .replayClient:
            return replayClient(nil, in: &state)
        case .editRule, .toggleRule, .deleteRule, .moveRuleUp, .moveRuleDown:
            state.notice = Notice(text: "That works in the rules view: press R", isError: true)
        default: break
        }
        return .none
    }
}
