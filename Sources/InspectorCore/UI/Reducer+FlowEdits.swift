import Foundation
import WireProtocol

extension Reducer {
    /// `d`, `D` and `b`: delete, duplicate, save a body; on the selected
    /// flow or the one shown. `argument` is the file of `:savebody FILE`.
    static func flowEdit(_ command: Command, on sequence: Int, argument: String?, in state: inout AppState) -> Effect {
        guard let record = state.session.store[sequence], !record.isDeleted else { return .none }
        let name = "\(record.log.request.method) \(Format.displayPath(of: record.log.request.url))"
        switch command {
        case .deleteFlow:
            let changes = state.session.delete(sequence)
            state.view.apply(changes, from: state.session.store)
            if state.diffBase == sequence { state.diffBase = nil }
            if let paused = state.pausedRows { state.pausedRows = paused.filter { $0 != sequence } }
            if case .detail = state.mode { state.mode = .list }
            state.syncCursor()
            state.notice = Notice(text: "Deleted \(name)", isError: false)
        case .duplicateFlow:
            let changes = state.session.duplicate(sequence)
            state.view.apply(changes, from: state.session.store)
            state.syncCursor()
            let replayKey = state.keymap.key(for: .replay, in: .list).map { " (\($0) sends it with netinspect's own client)" } ?? ""
            state.notice = Notice(text: "Duplicated \(name) as a new flow\(replayKey)", isError: false)
        case .saveBody:
            let wantsRequest = if case .detail(let detail) = state.mode { detail.tab == .request } else { false }
            let side = wantsRequest ? "request" : "response"
            guard let body = wantsRequest ? record.log.request.body : record.log.response?.body, !body.data.isEmpty else {
                state.notice = Notice(text: "The \(side) of \(name) has no body to save", isError: true)
                return .none
            }
            if let argument { return saveBody(body, of: side, to: argument) }
            state.prompt = Prompt(purpose: .saveBody(sequence, request: wantsRequest),
                                  text: suggestedFileName(record.log, request: wantsRequest))
        default: break
        }
        return .none
    }

    /// The effect that writes a body, with the note the program shows after.
    static func saveBody(_ body: CapturedBody, of side: String, to path: String) -> Effect {
        let partial = body.isTruncated ? " (only the first \(Format.size(body.data.count)) of \(Format.size(body.size)) were captured)" : ""
        return .writeFile(body.data, path: path, note: "Saved the \(side) body to \(path)\(partial)")
    }

    /// The URL's last path component, else `body`, with an extension for the content type.
    static func suggestedFileName(_ log: NetworkLog, request: Bool) -> String {
        let type = request ? log.request.headers.first("Content-Type") : log.response.flatMap { $0.mimeType ?? $0.headers.first("Content-Type") }
        let last = URL(string: log.request.url)?.lastPathComponent ?? ""
        let base = last.isEmpty || last == "/" ? "body" : last
        guard !base.contains("."), let type else { return base }
        let subtype = String(MediaType(type).subtype)
        let known = ["json": "json", "html": "html", "plain": "txt", "xml": "xml", "png": "png", "jpeg": "jpg", "gif": "gif",
                     "javascript": "js", "css": "css", "pdf": "pdf", "x-www-form-urlencoded": "txt"]
        return known[subtype].map { "\(base).\($0)" } ?? base
    }

    /// `space` and `p` in the detail view: the next or previous flow of the list.
    static func showNeighbour(_ command: Command, of detail: DetailState, in state: inout AppState) {
        guard let row = state.rows.firstIndex(of: detail.sequence) else { return }
        let next = row + (command == .nextFlow ? 1 : -1)
        guard state.rows.indices.contains(next) else {
            state.notice = Notice(text: command == .nextFlow ? "This is the last flow" : "This is the first flow", isError: false)
            return
        }
        state.follows = false
        state.moveCursor(to: next)
        var shown = detail
        shown.sequence = state.rows[next]
        shown.scroll = 0
        state.mode = .detail(shown)
    }

    /// `I`: breakpoints off, or back on with the last filter.
    static func toggleIntercept(in state: inout AppState) -> Effect {
        if state.interceptFilter != nil {
            state.lastInterceptFilter = state.interceptFilter
            return setIntercept("", in: &state)
        }
        guard let last = state.lastInterceptFilter else {
            state.prompt = Prompt(purpose: .intercept, text: "")
            return .none
        }
        return setIntercept(last, in: &state)
    }
}

extension Reducer {
    /// `m` in the detail view (nil: the next mode) and `:view MODE`: how
    /// bodies of the shown tab's content type are drawn, from now on.
    static func setBodyView(_ name: String?, in state: inout AppState) -> Effect {
        guard case .detail(let detail) = state.mode, let log = state.session.store[detail.sequence]?.log else {
            state.notice = Notice(text: "The body view is chosen in a flow's Request or Response tab", isError: true)
            return .none
        }
        let contentType = detail.tab == .request ? log.request.headers.first("Content-Type")
            : log.response.flatMap { $0.mimeType ?? $0.headers.first("Content-Type") }
        let type = Format.shortContentType(contentType)
        let current = state.bodyViews[type] ?? .auto
        let view: BodyFormatter.View
        if let name {
            guard let chosen = BodyFormatter.View(rawValue: name.lowercased()) else {
                state.notice = Notice(text: "view needs one of \(BodyFormatter.View.allCases.map(\.rawValue).joined(separator: ", "))", isError: true)
                return .none
            }
            view = chosen
        } else {
            view = current.next
        }
        state.bodyViews[type] = view
        state.notice = Notice(text: "Bodies of \(type.isEmpty ? "no content type" : type) shown as \(view.rawValue)", isError: false)
        state.clampScrolls()
        return .none
    }
}
