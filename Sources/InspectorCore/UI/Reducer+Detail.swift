import Foundation
import WireProtocol

extension Reducer {
    // MARK: - Detail

    static func detailCommand(_ command: Command, in state: inout AppState) -> Effect {
        guard case .detail(var detail) = state.mode else { return .none }
        switch command {
        case .nextTab, .previousTab, .requestTab, .responseTab, .timingTab, .grpcTab, .messagesTab:
            let all = DetailTab.tabs(for: state.session.store[detail.sequence]?.log)
            let index = all.firstIndex(of: detail.tab) ?? 0
            switch command {
            case .nextTab: detail.tab = all[(index + 1) % all.count]
            case .previousTab: detail.tab = all[(index + all.count - 1) % all.count]
            case .requestTab: detail.tab = .request
            case .responseTab: detail.tab = .response
            case .grpcTab:
                guard all.contains(.grpc) else {
                    state.notice = Notice(text: "Not a gRPC call: it has no gRPC tab", isError: true)
                    return .none
                }
                detail.tab = .grpc
            case .messagesTab:
                guard all.contains(.messages) else {
                    state.notice = Notice(text: "No messages: not a WebSocket, a gRPC call or an event stream", isError: true)
                    return .none
                }
                detail.tab = .messages
            default: detail.tab = .timing
            }
            state.show(detail.tab, of: detail)
            return .none
        case _ where flowCommands.contains(command):
            return onSelectedFlows(command, in: &state)
        case .intercept:
            state.prompt = Prompt(purpose: .intercept, text: state.interceptFilter ?? "")
        case .toggleIntercept:
            return toggleIntercept(in: &state)
        case .cycleBodyView:
            return setBodyView(nil, in: &state)
        case .toggleCollapse:
            detail.showsAllCalls.toggle()
        case .nextFlow, .previousFlow:
            showNeighbour(command, of: detail, in: &state)
            return .none
        case .searchBody:
            state.prompt = Prompt(purpose: .bodySearch, text: detail.search ?? "")
            return .none
        case .nextMatch:
            guard let search = detail.search else { return .none }
            detail.scroll = nextMatch(of: search, after: detail.scroll + 1, detail: &detail, state: state) ?? detail.scroll
        default:
            return scrollCommand(command, in: &state)
        }
        state.mode = .detail(detail)
        return .none
    }

    /// The first line at or after `line` (wrapping around) that contains
    /// `text`. A body longer than the lines shown is formatted whole when
    /// the match is not among them, so a search finds everything captured.
    static func nextMatch(of text: String, after line: Int, detail: inout DetailState, state: AppState) -> Int? {
        let needle = text.lowercased()
        var lines = state.detailLines(detail).map(\.text)
        func first(in range: Range<Int>) -> Int? { range.first { lines[$0].lowercased().contains(needle) } }
        let start = min(line, lines.count)
        if let found = first(in: start..<lines.count) { return found }
        if !detail.showsWholeBody, lines.contains(where: { $0.hasPrefix("… more lines not shown") }) {
            // Past the last line shown: the rest of the body before wrapping around.
            detail.showsWholeBody = true
            lines = state.detailLines(detail).map(\.text)
            if let found = first(in: start..<lines.count) { return found }
        }
        return first(in: 0..<start)
    }
}
