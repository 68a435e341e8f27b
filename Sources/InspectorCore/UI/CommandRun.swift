/// The command `netinspect -- COMMAND` runs, as the UI shows it: its
/// output, a line an entry, for the output view (`O`), and how it ended.
///
/// Its output arrives in chunks that may end mid-line; escape sequences
/// (colours, cursor moves) and control characters are removed so that they
/// cannot move netinspect's own cursor, and a carriage return starts its
/// line again, as a terminal shows a progress bar.
///
/// ```swift
/// var run = CommandRun(commandLine: "swift test")
/// run.append(Array("Building…\rBuilt\nok\n".utf8))
/// run.lines   // ["Built", "ok"]
/// ```
struct CommandRun: Sendable, Equatable {
    /// The command and its arguments, as typed.
    let commandLine: String
    /// Its finished output lines, oldest first (at most ``maximumLines``).
    private(set) var lines: [String] = []
    /// The line it is still writing.
    private(set) var partialLine: [UInt8] = []
    /// How it ended ("exited with status 0"), nil while it runs.
    private(set) var ending: String?
    /// Whether it ended with status 0.
    private(set) var succeeded = false
    /// Lines dropped from the start beyond ``maximumLines``.
    private(set) var droppedLines = 0
    /// Inside an escape sequence: what has been skipped of it so far.
    private var escape: EscapeState = .none

    /// Lines kept; the oldest go beyond this.
    static let maximumLines = 10_000

    private enum EscapeState: Sendable, Equatable { case none, started, csi, osc }

    init(commandLine: String) {
        self.commandLine = commandLine
    }

    /// The lines to show: the finished ones and the one being written.
    var shownLines: [String] {
        partialLine.isEmpty ? lines : lines + [String(decoding: partialLine, as: UTF8.self)]
    }

    /// Adds what the command wrote.
    mutating func append(_ bytes: [UInt8]) {
        for byte in bytes {
            switch escape {
            case .started:
                escape = byte == UInt8(ascii: "[") ? .csi : byte == UInt8(ascii: "]") ? .osc : .none
                continue
            case .csi:
                // Parameters and intermediates run up to a final byte from @ to ~.
                if byte >= 0x40, byte <= 0x7E { escape = .none }
                continue
            case .osc:
                // Ends with BEL (or ESC \, whose ESC starts a sequence that the backslash ends).
                if byte == 0x07 { escape = .none } else if byte == 0x1B { escape = .started }
                continue
            case .none: break
            }
            switch byte {
            case 0x1B: escape = .started
            case UInt8(ascii: "\n"): finishLine()
            case UInt8(ascii: "\r"): partialLine.removeAll(keepingCapacity: true)
            case UInt8(ascii: "\t"): partialLine += Array(repeating: UInt8(ascii: " "), count: 8 - partialLine.count % 8)
            case 0..<0x20, 0x7F: break
            default: partialLine.append(byte)
            }
        }
    }

    /// Notes how it ended; what it left unfinished is its last line.
    mutating func end(_ description: String, succeeded: Bool) {
        if !partialLine.isEmpty { finishLine() }
        ending = description
        self.succeeded = succeeded
    }

    private mutating func finishLine() {
        lines.append(String(decoding: partialLine, as: UTF8.self))
        partialLine.removeAll(keepingCapacity: true)
        if lines.count > Self.maximumLines + Self.maximumLines / 10 {
            let excess = lines.count - Self.maximumLines
            lines.removeFirst(excess)
            droppedLines += excess
        }
    }
}
