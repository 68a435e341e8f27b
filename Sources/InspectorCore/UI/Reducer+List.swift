import FlowFilter
import Foundation
import WireProtocol

extension Reducer {
    // MARK: - List

    static func listCommand(_ command: Command, in state: inout AppState) -> Effect {
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
            applyFilter(nil, in: &state)
        case .cycleSort: state.rebuildView(sortKey: state.view.sortKey.next)
        case .reverseSort: state.rebuildView(reversed: !state.view.isReversed)
        case .toggleTree, .toggleCollapse, .toggleCollapseAll:
            treeCommand(command, in: &state)
        case .togglePause:
            state.pausedRows = state.pausedRows == nil ? state.rows : nil
            state.syncCursor()
        case .clearFlows: state.confirmation = .clearFlows
        case .askToQuit: state.confirmation = .quit
        case _ where flowCommands.contains(command):
            return onSelectedFlows(command, in: &state)
        case .intercept:
            state.prompt = Prompt(purpose: .intercept, text: state.interceptFilter ?? "")
        case .exportHAR, .saveFlows:
            return askForFile(har: command == .exportHAR, in: &state)
        case .toggleIntercept: return toggleIntercept(in: &state)
        case .nextMark, .previousMark:
            let marked = Set(state.session.store.markedSequences)
            guard jump(forward: command == .nextMark, toOneOf: marked, in: &state) else {
                state.notice = Notice(text: marked.isEmpty ? "No marked flows (\(state.keyName(.toggleMark)) marks one)" : "No marked flow is shown", isError: true)
                return .none
            }
        case .nextHeld:
            let held = Set(state.session.store.heldSequences())
            guard jump(forward: true, toOneOf: held, in: &state) else {
                state.notice = Notice(text: held.isEmpty ? "No flow is held (\(state.keyName(.intercept)) sets breakpoints)" : "No held flow is shown (the filter hides it)", isError: true)
                return .none
            }
        case .markedOnly: applyFilter(state.filterText == markedFilter ? nil : markedFilter, in: &state)
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

    /// Moves the cursor to the next (or previous) shown flow of `targets`
    /// after the cursor, wrapping around, and stops following; false when
    /// none is shown.
    static func jump(forward: Bool, toOneOf targets: Set<Int>, in state: inout AppState) -> Bool {
        let rows = state.rows
        let order = forward ? Array((state.cursor + 1)..<max(state.cursor + 1, rows.count)) + Array(0..<min(state.cursor + 1, rows.count))
            : Array((0..<state.cursor).reversed()) + Array((state.cursor..<rows.count).reversed())
        guard let row = order.first(where: { targets.contains(rows[$0]) }) else { return false }
        state.follows = false
        state.moveCursor(to: row)
        return true
    }

    /// A flow newly held while none was, or while the cursor still rests on
    /// the flow the last hold stopped it on: the cursor stops on it, so
    /// `Enter` or `X` acts on it rather than on a flow that arrived since
    /// (Proxyman and Charles bring a breakpoint to the front the same way).
    /// A cursor on a held flow, or moved by the person while one is held,
    /// stays put.
    static func selectFirstHeld(heldBefore: [Int], in state: inout AppState) {
        let heldNow = state.session.store.heldSequences()
        // A following cursor is not the person's: it may sit on the held flow only because it is the newest.
        guard state.mode == .list, state.prompt == nil, state.follows || !heldNow.contains(where: { $0 == state.selection }),
              heldBefore.isEmpty || (state.stoppedAtHold != nil && state.stoppedAtHold == state.selection),
              let held = heldNow.first(where: { !heldBefore.contains($0) }), let row = state.rows.firstIndex(of: held),
              let log = state.session.store[held]?.log else { return }
        state.follows = false
        state.moveCursor(to: row)
        state.stoppedAtHold = held
        state.notice = Notice(text: "\(log.request.method) \(Format.displayPath(of: log.request.url)) is held: "
            + "\(state.keyName(.open)) shows it, \(state.keyName(.resume)) resumes, \(state.keyName(.kill)) kills "
            + "(\(state.keyName(.toggleFollow)) follows again)", isError: false)
    }

    /// Sets the free-text filter (`/`); empty text clears it.
    static func applySearch(_ text: String?, in state: inout AppState) {
        let trimmed = text?.trimmingCharacters(in: .whitespaces)
        state.searchText = trimmed?.isEmpty == false ? trimmed : nil
        state.rebuildView()
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
    /// The expression of the "marked only" quick filter.
    static let markedFilter = "~marked"

    /// Shows the flow's request as a curl command, Swift code or an HTTPie
    /// command, and asks for it to be copied.
    static func copy(_ format: Command, of sequence: Int, in state: inout AppState) -> Effect {
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

    /// Mark, comment, diff, delete, duplicate and save a body, on the
    /// selected flow or the one shown.
    static func flowCommand(_ command: Command, on sequence: Int, argument: String? = nil, in state: inout AppState) -> Effect {
        guard let record = state.session.store[sequence] else { return .none }
        switch command {
        case .deleteFlow, .duplicateFlow, .saveBody:
            return flowEdit(command, on: sequence, argument: argument, in: &state)
        case .toggleMark:
            return annotate(sequence, in: &state) { $0.isMarked.toggle() }
        case .editComment:
            if let argument { return annotate(sequence, in: &state) { $0.comment = argument } }
            state.prompt = Prompt(purpose: .comment(sequence), text: record.annotation.comment ?? "")
        case .setDiffBase:
            state.diffBase = sequence
            state.notice = Notice(text: "Diff base: \(record.log.request.method) \(Format.displayPath(of: record.log.request.url)); select another flow and press \(state.keyName(.openDiff))", isError: false)
        case .openDiff:
            let base = state.diffBase.flatMap { state.session.store[$0] != nil && $0 != sequence ? $0 : nil }
                ?? state.session.store.markedSequences.last { $0 != sequence }
            guard let base else {
                state.notice = Notice(text: "No base to compare with: press \(state.keyName(.setDiffBase)) on one flow (or mark it with \(state.keyName(.toggleMark))), then \(state.keyName(.openDiff)) on another", isError: true)
                return .none
            }
            state.showsHelp = false
            state.mode = .diff(DiffState(base: base, other: sequence))
        default: break
        }
        return .none
    }

    static func annotate(_ sequence: Int, in state: inout AppState, _ body: (inout FlowAnnotation) -> Void) -> Effect {
        let changes = state.session.annotate(sequence, body)
        guard !changes.isEmpty, let record = state.session.store[sequence] else { return .none }
        state.view.apply(changes, from: state.session.store)
        state.syncCursor()
        return .annotationsChanged([record.log.id: record.annotation])
    }

}
