/// A case-insensitive search for ASCII text in UTF-8 bytes, with `.` as "any
/// character but a line break" and optional `^`/`$` anchors: the subset of
/// regular expressions people type most, matched without decoding, bridging
/// or allocating.
///
/// Where it finds the needle, ICU's `NSRegularExpression` with
/// `.caseInsensitive` finds it too. Where it does not, ICU agrees unless
/// the text holds one of the few non-ASCII characters that Unicode case
/// folding equates with ASCII letters (`ß` with `ss`, the Kelvin sign with
/// `k`); that case is reported as ``Search/undecided`` for the engine to settle.
struct ByteNeedle: Sendable, Equatable {
    /// The outcome of a search.
    enum Search: Equatable {
        /// The needle occurs.
        case found
        /// The needle does not occur, under any case folding.
        case absent
        /// No ASCII occurrence, but the needle has letters and the text a
        /// character that may fold to them: only a Unicode-aware engine can tell.
        case undecided
    }

    /// ASCII bytes, letters lower-cased; ``anyCharacter`` stands for `.`.
    private(set) var bytes: [UInt8]
    /// `^`: the match must start at the first byte.
    var anchoredAtStart = false
    /// `$`: the match must end at the end, or before a final line break.
    var anchoredAtEnd = false

    /// Marks a `.` in ``bytes``. Arguments holding a real NUL never become
    /// byte needles, so the two cannot be confused.
    static let anyCharacter: UInt8 = 0

    /// A needle for literal ASCII `text`; `nil` when `text` has other bytes.
    init?(literal text: String) {
        guard text.utf8.allSatisfy({ $0 < 0x80 && $0 != Self.anyCharacter }) else { return nil }
        bytes = text.utf8.map(Self.foldASCII)
    }

    /// A needle from bytes already folded, with ``anyCharacter`` for `.`.
    init(folded bytes: [UInt8], anchoredAtStart: Bool = false, anchoredAtEnd: Bool = false) {
        self.bytes = bytes
        self.anchoredAtStart = anchoredAtStart
        self.anchoredAtEnd = anchoredAtEnd
    }

    /// Whether no match can contain the `": "` between a header's name and
    /// value: the needle has no `:`, no space and no `.`, and is not
    /// anchored at both ends (then it would have to be the whole line).
    var staysOnOneSideOfHeaderSeparator: Bool {
        !bytes.isEmpty && !(anchoredAtStart && anchoredAtEnd)
            && !bytes.contains { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: " ") || $0 == Self.anyCharacter }
    }

    /// For an unanchored needle `L: R` without `.`, its two sides. Header
    /// names cannot hold `": "`, so in a line `name: value` such a needle
    /// sits on the separator (`name` ends with `L`, `value` starts with `R`),
    /// starts on the separator's space (when `L` starts with one), or lies
    /// wholly inside `value`: the line need not be built.
    var separatorSides: (left: [UInt8], right: [UInt8])? {
        guard !anchoredAtStart, !anchoredAtEnd, !bytes.contains(Self.anyCharacter) else { return nil }
        guard let colon = bytes.indices.first(where: { bytes[$0] == UInt8(ascii: ":") && $0 + 1 < bytes.count && bytes[$0 + 1] == UInt8(ascii: " ") }) else {
            return nil
        }
        return (Array(bytes[..<colon]), Array(bytes[(colon + 2)...]))
    }

    /// For `^name:…` without `.` before the colon, the folded `name` a header
    /// line must have to match (when its name has no colon of its own).
    var requiredHeaderName: [UInt8]? {
        guard anchoredAtStart, let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
              !bytes[..<colon].contains(Self.anyCharacter) else { return nil }
        return Array(bytes[..<colon])
    }

    /// Whether the needle has ASCII letters, the only ASCII that non-ASCII
    /// characters can equal under Unicode case folding.
    var hasLetters: Bool {
        bytes.contains { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    /// Looks for the needle in `haystack`.
    func search(_ haystack: UnsafeBufferPointer<UInt8>) -> Search {
        // Whether a character that folds to ASCII letters was passed over.
        var foldable = false
        let found = bytes.withUnsafeBufferPointer { needle in
            if anchoredAtStart {
                if matches(needle, haystack, at: 0) { return true }
                foldable = haystack.indices.contains { haystack[$0] >= 0xC3 && Self.foldsToASCIILetters(haystack, at: $0) }
                return false
            }
            guard let first = needle.first else { return anchoredAtEnd ? matches(needle, haystack, at: haystack.count) : true }
            var start = 0
            if first == Self.anyCharacter {
                // Candidates are where characters start, as String(decoding:) splits them.
                while start < haystack.count {
                    foldable = foldable || Self.foldsToASCIILetters(haystack, at: start)
                    if matches(needle, haystack, at: start) { return true }
                    start += Self.unitLength(haystack, at: start)
                }
            } else {
                // An ASCII byte always is a character of its own. For a
                // lower-case letter, OR-ing 0x20 admits exactly its two cases.
                let orMask: UInt8 = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) ? 0x20 : 0
                while start < haystack.count {
                    let byte = haystack[start]
                    if byte >= 0xC3 { foldable = foldable || Self.foldsToASCIILetters(haystack, at: start) }
                    if byte | orMask == first, matches(needle, haystack, at: start) { return true }
                    start += 1
                }
            }
            return false
        }
        if found { return .found }
        return foldable && hasLetters ? .undecided : .absent
    }

    /// Whether the character at `position` is one whose case mappings or
    /// full case folding hold ASCII letters: ß, İ, ı, ŉ, ſ, ǰ, ẖ to ẚ, ẞ,
    /// the Kelvin sign, and the ligatures ﬀ to ﬆ. (A test re-derives the
    /// list from the Unicode tables of the running Swift.)
    static func foldsToASCIILetters(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        func byte(_ offset: Int) -> UInt8 { position + offset < bytes.count ? bytes[position + offset] : 0 }
        switch bytes[position] {
        case 0xC3: return byte(1) == 0x9F  // ß
        case 0xC4: return byte(1) == 0xB0 || byte(1) == 0xB1  // İ ı
        case 0xC5: return byte(1) == 0x89 || byte(1) == 0xBF  // ŉ ſ
        case 0xC7: return byte(1) == 0xB0  // ǰ
        case 0xE1: return byte(1) == 0xBA && ((0x96...0x9A).contains(byte(2)) || byte(2) == 0x9E)  // ẖ…ẚ ẞ
        case 0xE2: return byte(1) == 0x84 && byte(2) == 0xAA  // K (Kelvin)
        case 0xEF: return byte(1) == 0xAC && (0x80...0x86).contains(byte(2))  // ﬀ…ﬆ
        default: return false
        }
    }

    private func matches(_ needle: UnsafeBufferPointer<UInt8>, _ haystack: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        var position = start
        for expected in needle {
            guard position < haystack.count else { return false }
            if expected == Self.anyCharacter {
                guard Self.lineTerminatorLength(haystack, at: position) == nil else { return false }
                position += Self.unitLength(haystack, at: position)
            } else {
                guard Self.foldASCII(haystack[position]) == expected else { return false }
                position += 1
            }
        }
        return !anchoredAtEnd || Self.isEnd(haystack, at: position)
    }

    /// Where ICU's `$` (without multi-line mode) matches: at the very end,
    /// or before one line terminator that ends the input.
    private static func isEnd(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        guard position < bytes.count else { return true }
        return lineTerminatorLength(bytes, at: position).map { position + $0 == bytes.count } ?? false
    }

    /// The byte length of the line terminator at `position` (U+000A to
    /// U+000D, CR LF, U+0085, U+2028, U+2029), which ICU's `.` does not match.
    private static func lineTerminatorLength(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Int? {
        switch bytes[position] {
        case 0x0D: position + 1 < bytes.count && bytes[position + 1] == 0x0A ? 2 : 1
        case 0x0A...0x0C: 1
        case 0xC2: position + 1 < bytes.count && bytes[position + 1] == 0x85 ? 2 : nil
        case 0xE2: position + 2 < bytes.count && bytes[position + 1] == 0x80 && (0xA8...0xA9).contains(bytes[position + 2]) ? 3 : nil
        default: nil
        }
    }

    /// The number of bytes that decode to one scalar at `position`: a valid
    /// UTF-8 sequence, or the maximal ill-formed subpart that
    /// `String(decoding:as:)` turns into one U+FFFD.
    static func unitLength(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Int {
        let second: ClosedRange<UInt8>
        let length: Int
        switch bytes[position] {
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
    static func foldASCII(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }
}

/// Runs `body` over the UTF-8 bytes of `text`, without copying native strings.
@inline(__always)
func withUTF8<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = text
    return copy.withUTF8(body)
}

/// ASCII-case-insensitive equality, for header names and methods: no
/// Foundation, no allocation.
func equalsIgnoringASCIICase(_ text: String, _ other: String) -> Bool {
    withUTF8(text) { left in
        withUTF8(other) { right in
            left.count == right.count && !zip(left, right).contains { ByteNeedle.foldASCII($0) != ByteNeedle.foldASCII($1) }
        }
    }
}
