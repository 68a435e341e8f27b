import CNCursesW
import Foundation
import InspectorCore

/// The only code that talks to ncurses. It must be used from one thread
/// (the main thread): ncurses is not thread-safe.
///
/// It sets the terminal up (UTF-8 locale, raw mode, keypad, colours with the
/// terminal's default background or none at all), blits screens by writing
/// only the rows spans that changed since the last one, decodes keys, and
/// puts the terminal back as it was in ``restore()``.
final class Terminal {
    private var previous: Screen?
    private var pairs: [Style: Int32] = [:]
    private var attributes: [Style: Int32] = [:]
    private var isActive = false
    /// Whether the terminal shows colours.
    private(set) var hasColours = false
    /// Whether colour -1 means the terminal's own foreground and background;
    /// without it, white on black stands in.
    private var hasDefaultColours = false

    /// Starts curses mode; with `mouse`, asks the terminal to report clicks
    /// and the wheel (terminals that cannot simply never report them).
    /// - Throws: when standard input or output is not a terminal.
    init(mouse: Bool = true) throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw TerminalError.notATerminal
        }
        setlocale(LC_ALL, "")
        // The screen is drawn with box and block characters; terminals are
        // UTF-8 nearly everywhere, so a C locale should not turn them into
        // escape sequences.
        if String(cString: nl_langinfo(nl_item(CODESET))) != "UTF-8" {
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        set_escdelay(25)
        guard initscr() != nil else { throw TerminalError.notATerminal }
        isActive = true
        raw()
        noecho()
        nonl()
        keypad(netinspect_stdscr(), true)
        nodelay(netinspect_stdscr(), true)
        curs_set(0)
        if mouse { _ = netinspect_enable_mouse() }
        if has_colors() {
            start_color()
            hasDefaultColours = use_default_colors() == OK
            hasColours = true
        }
        setUpStyles(palette: hasColours ? .colour : .monochrome)
    }

    deinit { restore() }

    /// Leaves curses mode; safe to call more than once.
    func restore() {
        guard isActive else { return }
        isActive = false
        netinspect_disable_mouse()
        curs_set(1)
        endwin()
    }

    /// Leaves curses mode while `body` runs (an editor needs the terminal),
    /// then comes back, drops whatever input is waiting, and redraws
    /// everything.
    func runOutside<Result>(_ body: () -> Result) -> Result {
        guard isActive else { return body() }
        def_prog_mode()
        netinspect_disable_mouse()
        curs_set(1)
        endwin()
        let result = body()
        // Input left over from the program is not meant for netinspect: the
        // terminal's answers to its queries (an editor that quits at once
        // leaves them unread) and keys typed as it quit. Read as keys, they
        // would run commands and wipe the notice saying how it ended.
        tcflush(STDIN_FILENO, TCIFLUSH)
        flushinp()
        reset_prog_mode()
        curs_set(0)
        _ = netinspect_enable_mouse()
        invalidate()
        refresh()
        return result
    }

    /// The terminal's current size.
    var size: Size {
        Size(width: Int(getmaxx(netinspect_stdscr())), height: Int(getmaxy(netinspect_stdscr())))
    }

    /// Writes an escape sequence straight to the terminal, between two
    /// ncurses updates (OSC 52 for the clipboard).
    func sendControlSequence(_ sequence: String) {
        sequence.utf8CString.withUnsafeBufferPointer { buffer in
            _ = write(STDOUT_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }

    /// Forgets what is on screen, so the next blit draws everything.
    func invalidate() {
        previous = nil
        clearok(netinspect_stdscr(), true)
    }

    private func setUpStyles(palette: Palette) {
        var pairNumbers: [[Int32]: Int32] = [:]
        for style in Style.allCases {
            let look = palette[style]
            var value: Int32 = 0
            if look.bold { value |= netinspect_a_bold() }
            if look.reverse { value |= netinspect_a_reverse() }
            if look.underline { value |= netinspect_a_underline() }
            if look.dim { value |= netinspect_a_dim() }
            if hasColours, look.foreground != nil || look.background != nil {
                let key = [
                    Int32(look.foreground?.rawValue ?? (hasDefaultColours ? -1 : TerminalColor.white.rawValue)),
                    Int32(look.background?.rawValue ?? (hasDefaultColours ? -1 : TerminalColor.black.rawValue)),
                ]
                let number = pairNumbers[key] ?? {
                    let next = Int32(pairNumbers.count + 1)
                    init_pair(Int16(next), Int16(key[0]), Int16(key[1]))
                    pairNumbers[key] = next
                    return next
                }()
                value |= netinspect_color_pair(number)
            }
            attributes[style] = value
        }
    }

    /// Draws a screen, writing only the part of each row that changed.
    func blit(_ screen: Screen) {
        let old = previous?.size == screen.size ? previous : nil
        if old == nil { erase() }
        let width = screen.size.width
        for row in 0..<screen.size.height {
            var first = width
            var last = -1
            for column in 0..<width where old?[row, column] != screen[row, column] {
                first = min(first, column)
                last = column
            }
            guard last >= 0 else { continue }
            // Start on the left half of a wide character and end after the
            // right half, so no half character is left behind.
            if first > 0, screen[row, first].isContinuation { first -= 1 }
            if last + 1 < width, screen[row, last + 1].isContinuation { last += 1 }
            drawRun(screen, row: row, from: first, to: last)
        }
        previous = screen
        refresh()
    }

    private func drawRun(_ screen: Screen, row: Int, from first: Int, to last: Int) {
        var column = first
        while column <= last {
            let style = screen[row, column].style
            var text = ""
            let start = column
            while column <= last, screen[row, column].style == style {
                if let character = screen[row, column].character { text.append(character) }
                column += 1
            }
            attrset(attributes[style] ?? 0)
            // The bottom-right cell cannot advance the cursor: ncurses draws
            // it and reports an error, which means nothing here.
            _ = mvaddstr(Int32(row), Int32(start), text)
        }
        attrset(0)
    }

    /// Reads every key waiting (non-blocking): keys, and `.resize` when the
    /// terminal changed size.
    func readInput() -> [TerminalInput] {
        var inputs: [TerminalInput] = []
        var character: wint_t = 0
        while true {
            let result = get_wch(&character)
            if result == ERR { break }
            if result == netinspect_key_code_yes() {
                if Int32(character) == KEY_RESIZE {
                    inputs.append(.resize)
                } else if Int32(character) == KEY_MOUSE {
                    var row: Int32 = 0
                    var column: Int32 = 0
                    switch netinspect_get_mouse(&row, &column) {
                    case 1: inputs.append(.click(row: Int(row), column: Int(column)))
                    case 2: inputs.append(.wheel(-3))
                    case 3: inputs.append(.wheel(3))
                    default: break
                    }
                } else if let key = Self.functionKey(Int32(character)) {
                    inputs.append(.key(key))
                }
            } else if let key = Self.characterKey(UInt32(character)) {
                inputs.append(.key(key))
            }
        }
        return inputs
    }

    static func functionKey(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: .up
        case KEY_DOWN: .down
        case KEY_LEFT: .left
        case KEY_RIGHT: .right
        case KEY_PPAGE: .pageUp
        case KEY_NPAGE: .pageDown
        case KEY_HOME: .home
        case KEY_END: .end
        case KEY_ENTER: .enter
        case KEY_BTAB: .backTab
        case KEY_BACKSPACE: .backspace
        case KEY_DC: .delete
        default: nil
        }
    }

    static func characterKey(_ value: UInt32) -> Key? {
        switch value {
        case 9: return .tab
        case 10, 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        case 1...26: return .control(Character(Unicode.Scalar(value + 96)!))
        default: return Unicode.Scalar(value).map { .character(Character($0)) }
        }
    }
}

/// One thing read from the terminal.
enum TerminalInput: Equatable {
    case key(Key)
    case resize
    /// A left click at a cell.
    case click(row: Int, column: Int)
    /// The wheel, in lines: negative up.
    case wheel(Int)
}

/// Why the terminal could not be used.
enum TerminalError: Error, CustomStringConvertible {
    case notATerminal

    var description: String {
        "netinspect needs a terminal: run it in an interactive shell (standard input and output must be a TTY)"
    }
}
