import Foundation
import WireProtocol

extension Renderer {
    /// The rules view: who the rules reach, one row per rule (number, on or
    /// off, kind, text, where it came from), and where changes are saved.
    static func drawRules(_ state: AppState, cursor: Int, on screen: inout Screen) {
        let width = screen.size.width
        let book = state.rules
        let controlled = state.controlledAgents
        let connected = state.session.connectedAgents
        let reach = switch (connected, controlled) {
        case (0, _): "no app connected"
        case (1, 1): "the connected app allows control"
        case (1, _): "the connected app does not allow control"
        default: "\(controlled) of \(connected) connected apps allow control"
        }
        screen.write(StyledLine([Span("Traffic rules  ", .title), Span("\(book.inForce.count) on, \(book.entries.count) in all", .dim)]), row: 0)
        screen.write(reach, row: 0, column: max(0, width - DisplayWidth.of(reach)), style: controlled > 0 ? .message : .warning)
        screen.write(StyledLine([Span(" #  ", .header), Span("On   ", .header), Span("Kind            ", .header), Span("Rule (first to last; the first map-local that matches answers)", .header)]), row: 1)

        let top = 2
        let bottom = screen.size.height - 5
        let height = max(0, bottom - top + 1)
        if book.entries.isEmpty, height > 0 {
            screen.write("No rules. Press a and type KIND SPEC, e.g. map-remote |api.example.com|127.0.0.1:8080", row: top, style: .dim)
        }
        let first = height > 0 ? max(0, min(cursor - height + 1, book.entries.count - height)) : 0
        for (offset, index) in book.entries.indices.dropFirst(first).prefix(height).enumerated() {
            let entry = book.entries[index]
            let row = top + offset
            var spans = [
                Span(String(index + 1).fitted(toWidth: 2, alignRight: true) + "  ", .dim),
                Span(entry.isEnabled ? "on   " : "off  ", entry.isEnabled ? .status2xx : .dim),
                Span(entry.kind.rawValue.fitted(toWidth: 16), entry.isEnabled ? .method : .dim),
                Span(entry.spec, entry.isEnabled ? .normal : .dim),
            ]
            if entry.origin == .flag { spans.append(Span("  (command-line flag: not saved)", .dim)) }
            screen.write(StyledLine(spans), row: row)
            if index == cursor { screen.restyle(row: row, from: 0, width: width, style: .selected) }
        }
        if book.entries.count > height, height > 0 {
            let indicator = " \(first + 1)-\(min(book.entries.count, first + height))/\(book.entries.count) "
            screen.write(indicator, row: 1, column: width - DisplayWidth.of(indicator), style: .dim)
        }

        let saving: Span = switch book.lastSave {
        case .failed(let path, let reason)?: Span("Could not save to \(path): \(reason)", .error)
        case .saved(let path)?: Span("Saved to \(path)", .message)
        case nil:
            if let path = book.path { Span("Changes are saved to \(path)", .message) }
            else { Span("Not saved: netinspect started without --rules FILE; :rules.save FILE writes them", .warning) }
        }
        if bottom + 1 > top { screen.write(StyledLine([saving]), row: bottom + 1) }
        if bottom + 2 > top + 1 {
            screen.write("a add · Enter edit · space on/off · d delete · K/J move up/down · q back", row: bottom + 2, style: .dim)
        }
    }
}
