/// A regular expression matcher for ASCII text, for the patterns people
/// type into a filter (`items\?page=\d+$`, `"id":\s*42`, `/v[12]/`):
/// literals, `.`, classes (`[a-z]`, `[^/]`, `\d`, `\w`, `\s` and their
/// negations), the quantifiers `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`, a
/// leading `^`, a trailing `$` and top-level `|`. No groups, back-references
/// or look-around: those patterns go to `NSRegularExpression`.
///
/// It runs the bit-parallel Shift-And simulation of the pattern's automaton:
/// one table look-up and a few shifts per byte, whatever the pattern, with
/// no backtracking. It answers only for ASCII text, where it agrees with ICU
/// under `.caseInsensitive` (the tests compare them); for other text it
/// returns `nil` and the engine decides.
struct ByteRegex: Sendable {
    private let alternatives: [Automaton]

    /// The longest pattern, after `{n,m}` is spelled out, that fits the
    /// 64-bit state word.
    static let maximumElements = 63

    /// Compiles `pattern`; `nil` when it is outside the subset above.
    init?(_ pattern: String) {
        let bytes = Array(pattern.utf8)
        var automata: [Automaton] = []
        for alternative in Self.splitAlternatives(bytes) {
            guard let automaton = Automaton(alternative) else { return nil }
            automata.append(automaton)
        }
        alternatives = automata
    }

    /// Whether the pattern matches in `text`; `nil` when `text` is not ASCII.
    func matches(_ text: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard !text.contains(where: { $0 >= 0x80 }) else { return nil }
        return alternatives.contains { $0.matches(text) }
    }

    /// Splits at `|` outside classes; escapes are kept with what they escape.
    private static func splitAlternatives(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0, index = 0, inClass = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "["): inClass = true
            case UInt8(ascii: "]"): inClass = false
            case UInt8(ascii: "|") where !inClass:
                pieces.append(bytes[start ..< index])
                start = index + 1
            default: break
            }
            index += 1
        }
        pieces.append(bytes[start ..< min(index, bytes.count)])
        return pieces
    }
}

/// One alternative, as a sequence of elements each matching one byte of a
/// set: exactly once, optionally, or any number of times. State bit `i`
/// means "the first `i` elements are matched"; bit `count` is acceptance.
private struct Automaton: Sendable {
    /// For each ASCII byte, the elements it can be consumed by.
    private var masks = [UInt64](repeating: 0, count: 128)
    /// Elements consumed once (then the state moves on).
    private var once: UInt64 = 0
    /// Elements repeated (`*`): consuming keeps the state.
    private var repeated: UInt64 = 0
    /// Elements that may match nothing (`?`, `*`): the state may move on for free.
    private var skippable: UInt64 = 0
    private var count = 0
    private var anchoredAtStart = false
    private var anchoredAtEnd = false

    init?(_ source: ArraySlice<UInt8>) {
        var bytes = source
        if bytes.first == UInt8(ascii: "^") {
            anchoredAtStart = true
            bytes.removeFirst()
        }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "$"), index == bytes.endIndex - 1 {
                anchoredAtEnd = true
                break
            }
            guard let (set, afterAtom) = ByteSet.atom(in: bytes, at: index),
                  let (minimum, maximum, afterQuantifier) = Self.quantifier(in: bytes, at: afterAtom),
                  append(set, minimum: minimum, maximum: maximum)
            else { return nil }
            index = afterQuantifier
        }
    }

    func matches(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let accept: UInt64 = 1 << count
        let start = closure(1)
        var state: UInt64 = 0
        var position = 0
        while true {
            if !anchoredAtStart || position == 0 { state |= start }
            if state & accept != 0, !anchoredAtEnd || Self.isEnd(text, at: position) { return true }
            guard position < text.count, state != 0 || !anchoredAtStart else { return false }
            let consumed = state & masks[Int(text[position])]
            state = closure(((consumed & once) << 1) | (consumed & repeated))
            position += 1
        }
    }

    private func closure(_ state: UInt64) -> UInt64 {
        var state = state
        while true {
            let next = state | ((state & skippable) << 1)
            if next == state { return state }
            state = next
        }
    }

    /// Where `$` matches in ASCII text: at the end, or before a final
    /// line break (LF, VT, FF, CR or CR LF).
    private static func isEnd(_ text: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        switch text.count - position {
        case 0: true
        case 1: (0x0A...0x0D).contains(text[position])
        case 2: text[position] == 0x0D && text[position + 1] == 0x0A
        default: false
        }
    }

    /// Spells out `set{minimum,maximum}` as elements; false when too long.
    private mutating func append(_ set: ByteSet, minimum: Int, maximum: Int?) -> Bool {
        let optional = maximum.map { $0 - minimum } ?? 0
        let total = count + minimum + (maximum == nil ? 1 : optional)
        guard total <= ByteRegex.maximumElements else { return false }
        for _ in 0 ..< minimum { add(set, once: true, skippable: false) }
        if maximum == nil {
            add(set, once: false, skippable: true)
        } else {
            for _ in 0 ..< optional { add(set, once: true, skippable: true) }
        }
        return true
    }

    private mutating func add(_ set: ByteSet, once isOnce: Bool, skippable isSkippable: Bool) {
        let bit: UInt64 = 1 << count
        for byte in 0 ..< 128 where set.contains(UInt8(byte)) { masks[byte] |= bit }
        if isOnce { once |= bit } else { repeated |= bit }
        if isSkippable { skippable |= bit }
        count += 1
    }

    /// Reads `?`, `*`, `+` or `{n}`, `{n,}`, `{n,m}` (a lazy `?` after it is
    /// the same for "is there a match"; a possessive `+` is not supported).
    private static func quantifier(in bytes: ArraySlice<UInt8>, at index: Int) -> (Int, Int?, Int)? {
        guard index < bytes.endIndex else { return (1, 1, index) }
        var minimum = 1, maximum: Int? = 1, next = index + 1
        switch bytes[index] {
        case UInt8(ascii: "?"): (minimum, maximum) = (0, 1)
        case UInt8(ascii: "*"): (minimum, maximum) = (0, nil)
        case UInt8(ascii: "+"): (minimum, maximum) = (1, nil)
        case UInt8(ascii: "{"):
            guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "}")) else { return nil }
            let parts = bytes[(index + 1) ..< close].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let low = number(parts[0]) else { return nil }
            minimum = low
            maximum = parts.count == 1 ? low : (parts[1].isEmpty ? nil : number(parts[1]))
            if parts.count == 2, !parts[1].isEmpty, maximum == nil { return nil }
            if let maximum, maximum < minimum { return nil }
            next = close + 1
        default: return (1, 1, index)
        }
        if next < bytes.endIndex, bytes[next] == UInt8(ascii: "+") { return nil }
        if next < bytes.endIndex, bytes[next] == UInt8(ascii: "?") { next += 1 }
        return (minimum, maximum, next)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int(String(decoding: digits, as: UTF8.self))
    }
}

/// A set of ASCII bytes, as ICU sees one under `.caseInsensitive`.
private struct ByteSet {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    func contains(_ byte: UInt8) -> Bool {
        byte < 64 ? low & (1 << byte) != 0 : byte < 128 && high & (1 << (byte - 64)) != 0
    }

    mutating func insert(_ byte: UInt8) {
        if byte < 64 { low |= 1 << byte } else if byte < 128 { high |= 1 << (byte - 64) }
    }

    mutating func formUnion(_ other: ByteSet) {
        low |= other.low
        high |= other.high
    }

    /// The other case of every letter joins the set.
    func closedOverCase() -> ByteSet {
        var result = self
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") where contains(byte) || contains(byte | 0x20) {
            result.insert(byte)
            result.insert(byte | 0x20)
        }
        return result
    }

    /// Every other ASCII byte (the text is known to be ASCII).
    func inverted() -> ByteSet {
        ByteSet(low: ~low, high: ~high)
    }

    static func of(_ bytes: some Sequence<UInt8>) -> ByteSet {
        var set = ByteSet()
        for byte in bytes { set.insert(byte) }
        return set
    }

    static let digits = of(UInt8(ascii: "0")...UInt8(ascii: "9"))
    static let word = of(Array(UInt8(ascii: "0")...UInt8(ascii: "9")) + Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))
        + Array(UInt8(ascii: "a")...UInt8(ascii: "z")) + [UInt8(ascii: "_")])
    static let space = of([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20])
    /// `.`: anything but a line break.
    static let dot = of(0x0A...0x0D).inverted()

    /// The set of the atom at `index` and the index after it; `nil` when
    /// the atom is outside the subset (a group, an anchor in the middle…).
    static func atom(in bytes: ArraySlice<UInt8>, at index: Int) -> (ByteSet, Int)? {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "\\"):
            guard index + 1 < bytes.endIndex, let set = escape(bytes[index + 1]) else { return nil }
            return (set, index + 2)
        case UInt8(ascii: "["):
            return characterClass(in: bytes, from: index + 1)
        case UInt8(ascii: "."):
            return (dot, index + 1)
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "*"),
             UInt8(ascii: "+"), UInt8(ascii: "?"), UInt8(ascii: "^"), UInt8(ascii: "$"), UInt8(ascii: "|"), 0x80...:
            return nil
        default:
            return (of([byte]).closedOverCase(), index + 1)
        }
    }

    /// `\d`, `\w`, `\s`, their negations, `\t` `\n` `\r` `\f`, escaped punctuation.
    private static func escape(_ byte: UInt8) -> ByteSet? {
        switch byte {
        case UInt8(ascii: "d"): digits
        case UInt8(ascii: "D"): digits.inverted()
        case UInt8(ascii: "w"): word
        case UInt8(ascii: "W"): word.inverted()
        case UInt8(ascii: "s"): space
        case UInt8(ascii: "S"): space.inverted()
        case UInt8(ascii: "t"): of([0x09])
        case UInt8(ascii: "n"): of([0x0A])
        case UInt8(ascii: "r"): of([0x0D])
        case UInt8(ascii: "f"): of([0x0C])
        case 0x80..., UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            nil
        default: of([byte])
        }
    }

    /// A bracket expression from after its `[`: members, ranges and the
    /// escapes above, negated with a leading `^`. Nested sets, `&&`, `--`
    /// and POSIX names are left to the engine.
    private static func characterClass(in bytes: ArraySlice<UInt8>, from start: Int) -> (ByteSet, Int)? {
        var index = start
        let negated = index < bytes.endIndex && bytes[index] == UInt8(ascii: "^")
        if negated { index += 1 }
        var set = ByteSet()
        var first = true
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "]"), !first {
                let closed = set.closedOverCase()
                return (negated ? closed.inverted() : closed, index + 1)
            }
            first = false
            guard let (member, single, next) = classMember(in: bytes, at: index) else { return nil }
            index = next
            if let low = single, index + 1 < bytes.endIndex, bytes[index] == UInt8(ascii: "-"), bytes[index + 1] != UInt8(ascii: "]") {
                guard case let (_, high?, afterRange)? = classMember(in: bytes, at: index + 1), low <= high else { return nil }
                set.formUnion(of(low...high))
                index = afterRange
            } else {
                set.formUnion(member)
            }
        }
        return nil
    }

    /// One member of a class: its set, the byte when it is a single one (a
    /// range end), and the index after it.
    private static func classMember(in bytes: ArraySlice<UInt8>, at index: Int) -> (ByteSet, UInt8?, Int)? {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "\\"):
            guard index + 1 < bytes.endIndex, let set = escape(bytes[index + 1]) else { return nil }
            let escaped = bytes[index + 1]
            let single: UInt8? = switch escaped {
            case UInt8(ascii: "t"): 0x09
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "d"), UInt8(ascii: "D"), UInt8(ascii: "w"), UInt8(ascii: "W"), UInt8(ascii: "s"), UInt8(ascii: "S"): nil
            default: escaped
            }
            return (set, single, index + 2)
        case UInt8(ascii: "["), 0x80...:
            return nil
        case UInt8(ascii: "&") where index + 1 < bytes.endIndex && bytes[index + 1] == UInt8(ascii: "&"):
            return nil
        case UInt8(ascii: "-") where index + 1 < bytes.endIndex && bytes[index + 1] == UInt8(ascii: "-"):
            return nil
        default:
            return (of([byte]), byte, index + 1)
        }
    }
}
