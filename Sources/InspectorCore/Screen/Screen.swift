/// Width and height of a terminal, in cells.
package struct Size: Sendable, Hashable, CustomStringConvertible {
    /// Columns.
    package var width: Int
    /// Rows.
    package var height: Int

    /// Creates a size.
    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The smallest terminal the layout is designed for.
    static let minimum = Size(width: 80, height: 24)

    package var description: String { "\(width)x\(height)" }
}

/// One cell of the screen: a grapheme and the name of its style.
///
/// A two-column character occupies its cell and the next one; that next
/// cell is a ``isContinuation`` cell which the terminal layer skips.
package struct Cell: Sendable, Hashable {
    /// What is drawn; `nil` for the right half of a wide character.
    package var character: Character?
    /// How it is drawn; ``Palette`` maps it to colours and attributes.
    package var style: Style

    /// Creates a cell.
    init(_ character: Character? = " ", style: Style = .normal) {
        self.character = character
        self.style = style
    }

    /// Whether this cell is the right half of a wide character.
    package var isContinuation: Bool { character == nil }

    /// An empty cell in the default style.
    static let blank = Cell()
}

/// A rectangular grid of cells: what `render(state, size)` produces and the
/// terminal layer blits.
///
/// ```swift
/// var screen = Screen(size: Size(width: 80, height: 24))
/// screen.write("GET", row: 0, column: 0, style: .method)
/// ```
package struct Screen: Sendable, Equatable {
    /// The grid's dimensions.
    package let size: Size
    /// The cells, row by row.
    private(set) var cells: [Cell]

    /// A screen filled with blank cells.
    init(size: Size) {
        self.size = Size(width: max(0, size.width), height: max(0, size.height))
        self.cells = Array(repeating: .blank, count: self.size.width * self.size.height)
    }

    /// The cell at a position.
    package subscript(row: Int, column: Int) -> Cell {
        cells[row * size.width + column]
    }

    /// Writes text from a position, clipping at `limit` columns (default: the
    /// right edge) and ending clipped text with "…". Returns the columns used.
    @discardableResult
    mutating func write(_ text: String, row: Int, column: Int = 0, style: Style = .normal, limit: Int? = nil) -> Int {
        guard row >= 0, row < size.height, column >= 0, column < size.width else { return 0 }
        let available = min(limit ?? size.width - column, size.width - column)
        guard available > 0 else { return 0 }
        let fitted = text.truncated(toWidth: available)
        var x = column
        let base = row * size.width
        for character in fitted {
            let printable: Character = character.isControlCharacter ? "·" : character
            let width = DisplayWidth.of(printable)
            guard width > 0 else { continue }
            guard x + width <= column + available else { break }
            cells[base + x] = Cell(printable, style: style)
            if width == 2 { cells[base + x + 1] = Cell(nil, style: style) }
            x += width
        }
        return x - column
    }

    /// Paints a run of cells in a style, keeping their characters.
    mutating func restyle(row: Int, from column: Int, width: Int, style: Style) {
        guard row >= 0, row < size.height else { return }
        let start = max(0, column)
        let end = min(size.width, column + width)
        guard start < end else { return }
        for x in start..<end { cells[row * size.width + x].style = style }
    }

    /// Fills a whole row with blanks in a style.
    mutating func fill(row: Int, style: Style) {
        guard row >= 0, row < size.height else { return }
        for x in 0..<size.width { cells[row * size.width + x] = Cell(" ", style: style) }
    }

    /// The characters of one row, wide characters once, trailing spaces kept.
    func text(ofRow row: Int) -> String {
        var line = ""
        for x in 0..<size.width {
            if let character = self[row, x].character { line.append(character) }
        }
        return line
    }

    /// The whole screen as text, one line per row, trailing spaces removed:
    /// the form snapshot tests compare.
    package var text: String {
        (0..<size.height).map { row in
            var line = text(ofRow: row)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}

extension Character {
    /// Whether drawing this would move the cursor instead of showing a glyph.
    var isControlCharacter: Bool {
        unicodeScalars.allSatisfy { $0.properties.generalCategory == .control }
    }
}
