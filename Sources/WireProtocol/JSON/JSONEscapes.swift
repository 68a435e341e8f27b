/// The string rules of JSON text shared by ``JSONTape`` and ``JSONParser``:
/// `\u` escapes with their surrogate pairs, unescaping, UTF-8 checking.
enum JSONEscapes {
    /// Checks a string's text from `index` (just after its opening quote)
    /// to its closing quote, and moves `index` past that quote: escapes
    /// well formed, no control characters, UTF-8 valid. Whether it has escapes.
    ///
    /// Most strings on the wire are printable ASCII up to their quote: that
    /// case is inlined into the scanner, the rest is checked out of line.
    @inline(__always)
    static func scanString(_ bytes: UnsafeBufferPointer<UInt8>, at index: inout Int, end: Int) throws(WireError) -> Bool {
        let stop = skipPlainASCII(bytes, from: index, end: end)
        if stop < end, bytes[stop] == UInt8(ascii: "\"") {
            index = stop + 1
            return false
        }
        return try scanAnyString(bytes, at: &index, end: end)
    }

    @inline(never)
    private static func scanAnyString(_ bytes: UnsafeBufferPointer<UInt8>, at index: inout Int, end: Int) throws(WireError) -> Bool {
        func invalid(_ reason: String) -> WireError { .malformedPayload("not valid JSON (\(reason) at byte \(index))") }
        let start = index
        var hasEscapes = false
        var isASCII = true
        while index < end {
            index = skipPlainASCII(bytes, from: index, end: end)
            guard index < end else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard isASCII || isValidUTF8(UnsafeBufferPointer(rebasing: bytes[start ..< index])) else {
                    throw invalid("string is not valid UTF-8")
                }
                index += 1
                return hasEscapes
            }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                index += 1
                guard index < end else { throw invalid("unexpected end") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    guard let scalar = hex4(bytes, at: index, end: end) else { throw invalid("bad \\u escape") }
                    index += 4
                    if (0xDC00...0xDFFF).contains(scalar) { throw invalid("unpaired surrogate") }
                    guard (0xD800...0xDBFF).contains(scalar) else { continue }
                    guard end - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                          let low = hex4(bytes, at: index + 2, end: end), (0xDC00...0xDFFF).contains(low) else {
                        throw invalid("unpaired surrogate")
                    }
                    index += 6
                    continue
                default: throw invalid("unknown escape")
                }
            }
            if byte < 0x20 { throw invalid("control character in string") }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        throw invalid("unterminated string")
    }

    /// The first index at or after `index` whose byte needs a look (`"`,
    /// `\`, below 0x20 or above 0x7F), or one of the last seven: it passes
    /// over the printable ASCII before it eight bytes at a time.
    @inline(__always)
    private static func skipPlainASCII(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int, end: Int) -> Int {
        guard let base = bytes.baseAddress else { return index }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var index = index
        while end - index >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            // A byte that is zero, below 0x20 or 0x80 and above sets its high bit here (never misses one).
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- ones &* 0x20) | word
            // Borrows only run upward, so the lowest flag marks a byte that needs a look.
            guard special & highs == 0 else { return index + (special & highs).trailingZeroBitCount / 8 }
            index += 8
        }
        return index
    }

    /// The UTF-8 of a string's text that ``scanString(_:at:end:)`` accepted.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else {
                result.append(byte)
                index += 1
                continue
            }
            let escape = raw[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(raw, at: index, end: raw.count) ?? 0xFFFD
                index += 4
                if (0xD800...0xDBFF).contains(scalar), let low = hex4(raw, at: index + 2, end: raw.count) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                result.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default: result.append(escape)
            }
        }
        return result
    }

    /// Whether `raw` is valid UTF-8 (no overlong forms, no surrogates), without allocating.
    static func isValidUTF8(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        var iterator = raw.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, end: Int) -> UInt32? {
        guard end - index >= 4 else { return nil }
        var value: UInt32 = 0
        for offset in index ..< index + 4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
