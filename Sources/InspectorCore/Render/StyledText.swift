/// A run of text in one style.
package struct Span: Sendable, Equatable {
    /// The text.
    var text: String
    /// Its style.
    var style: Style

    /// Creates a span.
    init(_ text: String, _ style: Style = .normal) {
        self.text = text
        self.style = style
    }
}

/// One line of styled text: what formatters return and the renderer draws.
package struct StyledLine: Sendable, Equatable, ExpressibleByStringLiteral {
    /// The runs, left to right.
    var spans: [Span]

    /// Creates a line from spans.
    init(_ spans: [Span] = []) { self.spans = spans }
    /// A line of one span.
    init(_ text: String, _ style: Style = .normal) { self.spans = [Span(text, style)] }
    /// A plain line.
    package init(stringLiteral value: String) { self.init(value) }

    /// The characters, without styles.
    var text: String { spans.map(\.text).joined() }

    /// Splits the line into lines of at most `width` columns.
    func wrapped(toWidth width: Int) -> [StyledLine] {
        guard width > 0, DisplayWidth.of(text) > width else { return [self] }
        var lines: [StyledLine] = []
        var current: [Span] = []
        var used = 0
        for span in spans {
            var piece = ""
            for character in span.text {
                let columns = DisplayWidth.of(character)
                if used + columns > width {
                    if !piece.isEmpty { current.append(Span(piece, span.style)) }
                    lines.append(StyledLine(current))
                    current = []
                    piece = ""
                    used = 0
                }
                piece.append(character)
                used += columns
            }
            if !piece.isEmpty { current.append(Span(piece, span.style)) }
        }
        if !current.isEmpty { lines.append(StyledLine(current)) }
        return lines
    }
}

extension Screen {
    /// Draws a styled line from a column, clipped at the right edge.
    mutating func write(_ line: StyledLine, row: Int, column: Int = 0) {
        var x = column
        for span in line.spans where x < size.width {
            x += write(span.text, row: row, column: x, style: span.style)
        }
    }
}
