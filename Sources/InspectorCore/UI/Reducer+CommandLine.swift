import Foundation
import WireProtocol

extension Reducer {
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
        switch command {
        case .filterPrompt where argument != nil:
            applyFilter(argument, in: &state)
        case .intercept where argument != nil:
            return setIntercept(argument ?? "", in: &state)
        case .search where argument != nil:
            applySearch(argument, in: &state)
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
        case .exportHAR, .saveFlows:
            guard let argument else { return askForFile(har: command == .exportHAR, in: &state) }
            return writeFlows(har: command == .exportHAR, to: argument, in: state)
        case .addRule where argument != nil:
            // Added where the person is: the rules view opens only with R.
            return ruleRequest(argument ?? "", replacing: nil, in: &state)
        case .saveRules:
            return saveRules(to: argument, in: &state)
        case .setBodyView:
            return setBodyView(argument, in: &state)
        case .startServerReplay:
            return startServerReplay(argument ?? "", in: &state)
        case .stopServerReplay:
            return stopServerReplay(in: &state)
        case .newFlow:
            return newFlow(argument, in: &state)
        case .replayClient:
            return replayClient(argument, in: &state)
        case _ where flowCommands.contains(command):
            return onSelectedFlows(command, argument: argument, in: &state)
        default:
            return run(command, in: &state)
        }
        return .none
    }

    static func promptCommand(_ command: Command, in state: inout AppState) -> Effect {
        guard let prompt = state.prompt else { return .none }
        switch command {
        case .deleteBackward:
            state.prompt?.isSelected = false
            if !prompt.text.isEmpty { state.prompt?.text.removeLast() }
        case .clearPrompt:
            state.prompt?.text = ""
        case .cancelPrompt:
            state.prompt = nil
        case .completePrompt:
            state.prompt?.isSelected = false
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
                applySearch(text, in: &state)
            case .filter:
                applyFilter(text, in: &state)
            case .intercept:
                return setIntercept(text, in: &state)
            case .writeFlows(let har):
                guard !text.isEmpty else { break }
                return writeFlows(har: har, to: text, in: state)
            case let .saveBody(sequence, request):
                guard !text.isEmpty, let log = state.session.store[sequence]?.log,
                      let body = request ? log.request.body : log.response?.body else { break }
                return saveBody(body, of: request ? "request" : "response", to: text)
            case .bodySearch:
                guard case .detail(var detail) = state.mode else { break }
                detail.search = text.isEmpty ? nil : text
                if let search = detail.search {
                    if let line = nextMatch(of: search, after: detail.scroll, detail: &detail, state: state) {
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

    /// `w` and `W`: asks where to write the shown flows, offering a name
    /// stamped with the time, so nothing lands in a folder unasked.
    static func askForFile(har: Bool, in state: inout AppState) -> Effect {
        let stamp = Format.fileStamp(state.clock, in: state.timeZone)
        state.prompt = Prompt(purpose: .writeFlows(har: har), text: "netinspect-\(stamp).\(har ? "har" : "jsonl")")
        return .none
    }

    /// The shown flows, with their marks and comments, to a file.
    static func writeFlows(har: Bool, to path: String, in state: AppState) -> Effect {
        let store = state.session.store
        let flows = state.rows.compactMap { store[$0]?.log }
        return har ? .exportHAR(flows, annotations: store.annotations, path: path)
            : .saveFlows(FlowFile.Contents(flows: flows, annotations: store.annotations), path: path)
    }
}
