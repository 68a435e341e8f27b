import Foundation

/// The argument of a filter operator, compiled once for matching many flows.
///
/// A pattern is case-insensitive. Most arguments people type are plain
/// words (`api`, `example.com`, `\.json`), so a pattern without regular
/// expression syntax beyond `.` and escaped punctuation is matched by a byte
/// scan that needs no decoding or bridging; anything else goes to
/// `NSRegularExpression`. Both give the same answers (the tests hold them to it).
public struct FilterPattern: Sendable, Equatable, CustomStringConvertible {
    /// The argument as written (after unquoting).
    public let source: String
    /// Whether ``source`` is a regular expression (`~u`, `~h`…) or plain text (`~d`, `/`).
    public let isRegularExpression: Bool
    private let matcher: Matcher

    private enum Matcher: Sendable {
        /// ASCII bytes, letters lower-cased; ``FilterPattern/anyCharacter`` stands for `.`.
        case bytes([UInt8])
        case regex(CompiledRegex)
    }

    /// Marks a `.` of a regular expression in a byte needle. A literal NUL
    /// in an argument sends it to the regular expression engine instead.
    fileprivate static let anyCharacter: UInt8 = 0

    /// A pattern that matches `text` as a case-insensitive substring.
    public init(literal text: String) {
        source = text
        isRegularExpression = false
        if text.utf8.allSatisfy({ $0 < 0x80 && $0 != Self.anyCharacter }) {
            matcher = .bytes(text.utf8.map(Self.foldASCII))
        } else {
            // Non-ASCII letters need Unicode case folding; ICU has it. An
            // escaped pattern always compiles, hence the `try!`.
            matcher = .regex(try! CompiledRegex(NSRegularExpression.escapedPattern(for: text)))
        }
    }

    /// A pattern for a case-insensitive regular expression (ICU syntax).
    /// - Throws: ``InvalidRegularExpression`` when `source` does not compile.
    public init(regularExpression source: String) throws(InvalidRegularExpression) {
        self.source = source
        isRegularExpression = true
        if let needle = Self.byteNeedle(forRegularExpression: source) {
            matcher = .bytes(needle)
        } else {
            matcher = .regex(try CompiledRegex(source))
        }
    }

    /// A regular expression that does not compile.
    public struct InvalidRegularExpression: Error, Sendable, Equatable {
        /// The engine's explanation, when it gave one.
        public var reason: String
    }

    public static func == (lhs: FilterPattern, rhs: FilterPattern) -> Bool {
        lhs.source == rhs.source && lhs.isRegularExpression == rhs.isRegularExpression
    }

    public var description: String { source }

    /// Whether the pattern is matched without the regular expression engine
    /// (exposed for tests that hold the two paths to the same answers).
    var usesByteScan: Bool {
        if case .bytes = matcher { true } else { false }
    }

    // MARK: Matching

    /// Whether the pattern occurs in `text`.
    func matches(_ text: String) -> Bool {
        switch matcher {
        case .bytes(let needle): withUTF8(text) { Self.scan(needle, in: $0) }
        case .regex(let regex): regex.matches(text)
        }
    }

    /// Whether the pattern occurs in UTF-8 `bytes` (invalid sequences read as U+FFFD).
    func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch matcher {
        case .bytes(let needle): Self.scan(needle, in: bytes)
        case .regex(let regex): regex.matches(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Whether the pattern occurs in `data` read as UTF-8 text. The byte
    /// scan reads the bytes in place; only a regular expression decodes them.
    func matches(utf8 data: Data) -> Bool {
        switch matcher {
        case .bytes(let needle):
            data.withUnsafeBytes { Self.scan(needle, in: $0.bindMemory(to: UInt8.self)) }
        case .regex(let regex):
            regex.matches(String(decoding: data, as: UTF8.self))
        }
    }

    // MARK: The byte scan

    /// The needle for a regular expression that is plain ASCII text apart
    /// from `.` (any character but a line break) and backslash-escaped
    /// punctuation; `nil` when it needs the real engine.
    private static func byteNeedle(forRegularExpression source: String) -> [UInt8]? {
        var needle: [UInt8] = []
        var escaped = false
        for byte in source.utf8 {
            guard byte < 0x80, byte != anyCharacter else { return nil }
            if escaped {
                // `\d`, `\b`, `\1`… are classes, anchors and references.
                guard !isASCIIAlphanumeric(byte) else { return nil }
                needle.append(foldASCII(byte))
                escaped = false
                continue
            }
            switch byte {
            case UInt8(ascii: "\\"): escaped = true
            case UInt8(ascii: "."): needle.append(anyCharacter)
            case UInt8(ascii: "^"), UInt8(ascii: "$"), UInt8(ascii: "|"), UInt8(ascii: "?"),
                 UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "("), UInt8(ascii: ")"),
                 UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"):
                return nil
            default: needle.append(foldASCII(byte))
            }
        }
        return escaped ? nil : needle
    }

    /// Whether `needle` occurs in `haystack`, ASCII letters compared without case.
    private static func scan(_ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        return needle.withUnsafeBufferPointer { needle in
            var start = 0
            if first == anyCharacter {
                // Candidates are where characters start, as String(decoding:) splits them.
                while start < haystack.count {
                    if matchesAt(start, needle, haystack) { return true }
                    start += unitLength(haystack, at: start)
                }
            } else {
                // An ASCII byte always starts a character of its own.
                while start < haystack.count {
                    if foldASCII(haystack[start]) == first, matchesAt(start, needle, haystack) { return true }
                    start += 1
                }
            }
            return false
        }
    }

    private static func matchesAt(_ start: Int, _ needle: UnsafeBufferPointer<UInt8>, _ haystack: UnsafeBufferPointer<UInt8>) -> Bool {
        var position = start
        for expected in needle {
            guard position < haystack.count else { return false }
            if expected == anyCharacter {
                guard !isLineTerminator(haystack, at: position) else { return false }
                position += unitLength(haystack, at: position)
            } else {
                guard foldASCII(haystack[position]) == expected else { return false }
                position += 1
            }
        }
        return true
    }

    /// Whether a line terminator, which ICU's `.` does not match, starts at
    /// `position`: U+000A to U+000D, U+0085, U+2028, U+2029.
    private static func isLineTerminator(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        switch bytes[position] {
        case 0x0A...0x0D: true
        case 0xC2: position + 1 < bytes.count && bytes[position + 1] == 0x85
        case 0xE2: position + 2 < bytes.count && bytes[position + 1] == 0x80 && (0xA8...0xA9).contains(bytes[position + 2])
        default: false
        }
    }

    /// The number of bytes that decode to one scalar at `position`: a valid
    /// UTF-8 sequence, or the maximal ill-formed subpart that
    /// `String(decoding:as:)` turns into one U+FFFD.
    private static func unitLength(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Int {
        let lead = bytes[position]
        let second: ClosedRange<UInt8>
        let length: Int
        switch lead {
        case ..<0x80: return 1
        case 0xC2...0xDF: (second, length) = (0x80...0xBF, 2)
        case 0xE0: (second, length) = (0xA0...0xBF, 3)
        case 0xED: (second, length) = (0x80...0x9F, 3)
        case 0xE1...0xEF: (second, length) = (0x80...0xBF, 3)
        case 0xF0: (second, length) = (0x90...0xBF, 4)
        case 0xF4: (second, length) = (0x80...0x8F, 4)
        case 0xF1...0xF3: (second, length) = (0x80...0xBF, 4)
        default: return 1  // continuation bytes, C0, C1, F5...FF
        }
        var consumed = 1
        while consumed < length, position + consumed < bytes.count {
            let allowed = consumed == 1 ? second : 0x80...0xBF
            guard allowed.contains(bytes[position + consumed]) else { break }
            consumed += 1
        }
        return consumed
    }

    @inline(__always)
    private static func foldASCII(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        let folded = foldASCII(byte)
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(folded)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(folded)
    }
}

/// Runs `body` over the UTF-8 bytes of `text` without copying native strings.
@inline(__always)
func withUTF8<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = text
    return copy.withUTF8(body)
}

/// A compiled, case-insensitive `NSRegularExpression`.
///
/// `NSRegularExpression` is immutable after creation and documented as safe
/// to use from several threads at once (corelibs checks out a private ICU
/// matcher per call), which is what makes this wrapper `Sendable`.
private struct CompiledRegex: @unchecked Sendable {
    let regex: NSRegularExpression

    init(_ pattern: String) throws(FilterPattern.InvalidRegularExpression) {
        do {
            regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
        } catch {
            throw FilterPattern.InvalidRegularExpression(reason: (error as NSError).localizedDescription)
        }
    }

    func matches(_ text: String) -> Bool {
        let range = NSRange(location: 0, length: text.utf16.count)
        return regex.rangeOfFirstMatch(in: text, options: [], range: range).location != NSNotFound
    }
}
