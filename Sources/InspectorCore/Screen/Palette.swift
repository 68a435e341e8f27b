/// Names of the ways a cell can look. Rendering picks names; ``Palette``
/// alone decides colours, so a theme or a monochrome terminal changes one
/// table.
package enum Style: String, Sendable, Hashable, CaseIterable {
    /// Chrome: body text, de-emphasised text, the list header, titles, the
    /// selected row, the status bar, the prompt, notes, warnings and errors.
    case normal, dim, header, title, selected, statusBar, prompt, message, warning, error
    /// Flow parts: method, host, detail tabs, search matches, section headings.
    case method, host, tabActive, tabInactive, match, heading
    /// Status codes by class, and flows without one (pending, failed).
    case status1xx, status2xx, status3xx, status4xx, status5xx, pending, failed
    /// JSON tokens.
    case jsonKey, jsonString, jsonNumber, jsonLiteral, jsonPunctuation
    /// The parts of timing bars.
    case barWaiting, barReceiving
    /// A request the app received (its direction marker); the slowest call
    /// on an inbound flow's waterfall.
    case inbound, barSlowest
    /// What the person added: marks and comments.
    case mark, comment
    /// Diff lines: only in the base, only in the other flow, different in both.
    case diffRemoved, diffAdded, diffChanged
}

/// A terminal colour: the eight ANSI colours or the terminal's default.
package enum TerminalColor: Int, Sendable, Hashable {
    /// The ANSI colour numbers 0-7.
    case black = 0, red, green, yellow, blue, magenta, cyan, white
}

/// How one style is drawn: colours (nil = the terminal's default) and attributes.
package struct Appearance: Sendable, Hashable {
    /// Foreground colour.
    package var foreground: TerminalColor?
    /// Background colour.
    package var background: TerminalColor?
    /// Bold.
    package var bold: Bool
    /// Reverse video.
    package var reverse: Bool
    /// Underlined.
    package var underline: Bool
    /// Dim.
    package var dim: Bool

    /// Creates an appearance.
    init(
        _ foreground: TerminalColor? = nil,
        on background: TerminalColor? = nil,
        bold: Bool = false,
        reverse: Bool = false,
        underline: Bool = false,
        dim: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.reverse = reverse
        self.underline = underline
        self.dim = dim
    }
}

/// Maps every ``Style`` to an ``Appearance``: the one place colours live.
///
/// ```swift
/// let palette = terminalHasColors ? Palette.colour : Palette.monochrome
/// let look = palette[.status5xx]
/// ```
package struct Palette: Sendable {
    private let table: [Style: Appearance]

    /// Creates a palette; styles missing from `table` look normal.
    init(_ table: [Style: Appearance]) { self.table = table }

    /// The appearance of a style.
    package subscript(style: Style) -> Appearance { table[style] ?? Appearance() }

    /// The default palette for terminals with colours.
    package static let colour = Palette([
        .dim: Appearance(dim: true),
        .header: Appearance(bold: true, underline: true),
        .title: Appearance(.cyan, bold: true),
        .selected: Appearance(.black, on: .cyan),
        .statusBar: Appearance(.white, on: .blue),
        .prompt: Appearance(.yellow, bold: true),
        .message: Appearance(.cyan),
        .warning: Appearance(.yellow, bold: true),
        .error: Appearance(.red, bold: true),
        .method: Appearance(.magenta),
        .host: Appearance(.cyan),
        .tabActive: Appearance(.black, on: .cyan, bold: true),
        .tabInactive: Appearance(dim: true),
        .match: Appearance(.black, on: .yellow),
        .heading: Appearance(.blue, bold: true),
        .status1xx: Appearance(.cyan),
        .status2xx: Appearance(.green),
        .status3xx: Appearance(.yellow),
        .status4xx: Appearance(.red),
        .status5xx: Appearance(.red, bold: true),
        .pending: Appearance(.yellow, dim: true),
        .failed: Appearance(.red, reverse: true),
        .jsonKey: Appearance(.blue, bold: true),
        .jsonString: Appearance(.green),
        .jsonNumber: Appearance(.cyan),
        .jsonLiteral: Appearance(.magenta),
        .jsonPunctuation: Appearance(dim: true),
        .barWaiting: Appearance(.yellow),
        .barReceiving: Appearance(.green),
        .inbound: Appearance(.blue, bold: true),
        .barSlowest: Appearance(.magenta, bold: true),
        .mark: Appearance(.yellow, bold: true),
        .comment: Appearance(.yellow),
        .diffRemoved: Appearance(.red),
        .diffAdded: Appearance(.green),
        .diffChanged: Appearance(.yellow),
    ])

    /// For terminals without colours: attributes only, so selection, tabs,
    /// errors and matches stay distinguishable.
    package static let monochrome = Palette([
        .dim: Appearance(dim: true),
        .header: Appearance(bold: true, underline: true),
        .title: Appearance(bold: true),
        .selected: Appearance(reverse: true),
        .statusBar: Appearance(reverse: true),
        .prompt: Appearance(bold: true),
        .warning: Appearance(bold: true),
        .error: Appearance(bold: true),
        .tabActive: Appearance(bold: true, reverse: true),
        .tabInactive: Appearance(dim: true),
        .match: Appearance(reverse: true),
        .heading: Appearance(bold: true),
        .status4xx: Appearance(bold: true),
        .status5xx: Appearance(bold: true, underline: true),
        .pending: Appearance(dim: true),
        .failed: Appearance(bold: true, reverse: true),
        .jsonKey: Appearance(bold: true),
        .jsonPunctuation: Appearance(dim: true),
        .barWaiting: Appearance(dim: true),
        .inbound: Appearance(bold: true),
        .barSlowest: Appearance(bold: true, underline: true),
        .mark: Appearance(bold: true),
        .diffRemoved: Appearance(dim: true),
        .diffAdded: Appearance(bold: true),
        .diffChanged: Appearance(underline: true),
    ])
}
