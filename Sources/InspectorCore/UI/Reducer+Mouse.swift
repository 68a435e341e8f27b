import Foundation
import WireProtocol

extension Reducer {
    // MARK: - Mouse

    static func click(row: Int, column: Int, in state: inout AppState) -> Effect {
        guard state.prompt == nil, state.confirmation == nil, !state.showsHelp, state.overlay == nil else { return .none }
        switch state.mode {
        case .list:
            let index = state.listTop + row - 1
            guard row >= 1, row <= state.listHeight, state.rows.indices.contains(index) else { return .none }
            if index == state.cursor { return run(.open, in: &state) }
            state.follows = false
            state.moveCursor(to: index)
        case .detail(let detail):
            guard row == 1 else { return .none }
            var x = 0
            for tab in DetailTab.tabs(for: state.session.store[detail.sequence]?.log) {
                let width = DisplayWidth.of(" \(tab.rawValue + 1) \(tab.title) ")
                if column >= x, column < x + width {
                    state.show(tab, of: detail)
                }
                x += width + 1
            }
        case .events, .diff, .rules, .output, .insights: break
        }
        return .none
    }

    static func wheel(_ lines: Int, in state: inout AppState) {
        guard state.prompt == nil, state.confirmation == nil else { return }
        if case .list = state.mode, !state.showsHelp, state.overlay == nil {
            state.moveCursor(to: state.cursor + lines)
        } else {
            state.scroll(by: lines)
        }
    }
}
