/// What can be learnt about an ICU regular expression without running it.
enum RegexTranslation {
    /// The needle that matches exactly what `pattern` matches, when the
    /// pattern is ASCII text with `.`, backslash-escaped punctuation and a
    /// leading `^` or trailing `$` only; `nil` when it needs the real engine.
    static func exactNeedle(for pattern: String) -> ByteNeedle? {
        var bytes = Array(pattern.utf8)
        var needle = ByteNeedle(folded: [])
        if bytes.first == UInt8(ascii: "^") {
            needle.anchoredAtStart = true
            bytes.removeFirst()
        }
        if bytes.last == UInt8(ascii: "$"), !endsInEscape(bytes.dropLast()) {
            needle.anchoredAtEnd = true
            bytes.removeLast()
        }
        var folded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte < 0x80, byte != ByteNeedle.anyCharacter else { return nil }
            switch byte {
            case UInt8(ascii: "\\"):
                // `\d`, `\b`, `\1`… are classes, anchors and references.
                guard index + 1 < bytes.count, isEscapedLiteral(bytes[index + 1]) else { return nil }
                folded.append(ByteNeedle.foldASCII(bytes[index + 1]))
                index += 1
            case UInt8(ascii: "."): folded.append(ByteNeedle.anyCharacter)
            case _ where metacharacters.contains(byte): return nil
            default: folded.append(ByteNeedle.foldASCII(byte))
            }
            index += 1
        }
        return ByteNeedle(folded: folded, anchoredAtStart: needle.anchoredAtStart, anchoredAtEnd: needle.anchoredAtEnd)
    }

    /// The longest run of ASCII text that every match of `pattern` must
    /// contain, for rejecting most inputs before the engine runs; `nil` when
    /// there is none or the pattern is beyond this simple reading (an
    /// alternation at the top level, inline flags, `\Q…\E`).
    ///
    /// Groups and character classes are skipped whole: what is inside them
    /// is not needed for a match to be required. A quantifier that allows
    /// zero (`?`, `*`, `{0,…}`) takes its character out of the run.
    static func requiredLiteral(in pattern: String) -> ByteNeedle? {
        let bytes = Array(pattern.utf8)
        var best: [UInt8] = [], run: [UInt8] = []
        func endRun() {
            if run.count > best.count { best = run }
            run = []
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escaped = bytes[index]
                index += 1
                if isEscapedLiteral(escaped) {
                    run.append(ByteNeedle.foldASCII(escaped))
                } else if escaped == UInt8(ascii: "Q") || escaped == UInt8(ascii: "E") {
                    return nil
                } else {
                    endRun()
                    if !singleLetterEscapes.contains(escaped) { index = skipEscapePayload(bytes, from: index) }
                }
            case UInt8(ascii: "("):
                endRun()
                if index < bytes.count, bytes[index] == UInt8(ascii: "?"), index + 1 < bytes.count,
                   isASCIILetter(bytes[index + 1]) || bytes[index + 1] == UInt8(ascii: "-") {
                    return nil  // (?x) and friends change how the rest reads
                }
                guard let end = closing(of: bytes, groupFrom: index) else { return nil }
                index = end
            case UInt8(ascii: "["):
                endRun()
                guard let end = closing(of: bytes, classFrom: index) else { return nil }
                index = end
            case UInt8(ascii: "|"), UInt8(ascii: ")"):
                return nil
            case UInt8(ascii: "?"), UInt8(ascii: "*"):
                if !run.isEmpty { run.removeLast() }
                endRun()
            case UInt8(ascii: "{"):
                if !run.isEmpty { run.removeLast() }
                endRun()
                guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "}")) else { return nil }
                index = close + 1
            case UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "$"), ByteNeedle.anyCharacter:
                endRun()
            case 0x80...:
                endRun()
            default:
                run.append(ByteNeedle.foldASCII(byte))
            }
        }
        endRun()
        return best.isEmpty ? nil : ByteNeedle(folded: best)
    }

    private static let metacharacters = Set("^$|?*+()[]{}".utf8)

    /// Escapes that stand alone: classes (`\d`) and assertions (`\b`).
    private static let singleLetterEscapes = Set("dDsSwWbBAzZGRhHvVX".utf8)

    /// `\.` is a dot; `\d` is not a `d`.
    private static func isEscapedLiteral(_ byte: UInt8) -> Bool {
        byte < 0x80 && !isASCIILetter(byte) && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(ByteNeedle.foldASCII(byte))
    }

    private static func endsInEscape(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.reversed().prefix { $0 == UInt8(ascii: "\\") }.count % 2 == 1
    }

    /// Skips what follows `\x`, `\u`, `\p`, `\N`, `\k`, `\0`, `\1`…: letters,
    /// digits and one `{…}` or `<…>`. Generous, since skipping text only
    /// weakens the pre-filter, never makes it wrong.
    private static func skipEscapePayload(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "<") {
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: ">")
                return (bytes[index...].firstIndex(of: close) ?? bytes.count - 1) + 1
            }
            guard byte < 0x80, isASCIILetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return index }
            index += 1
        }
        return index
    }

    /// The index after the `)` closing the group whose body starts at `start`.
    private static func closing(of bytes: [UInt8], groupFrom start: Int) -> Int? {
        var depth = 1, index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "["):
                guard let end = closing(of: bytes, classFrom: index + 1) else { return nil }
                index = end - 1
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth == 0 { return index + 1 }
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The index after the `]` closing the set whose body starts at `start`
    /// (a leading `]` or `^]` is a member; sets may nest).
    private static func closing(of bytes: [UInt8], classFrom start: Int) -> Int? {
        var index = start
        if index < bytes.count, bytes[index] == UInt8(ascii: "^") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1 }
        var depth = 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return index + 1 }
            default: break
            }
            index += 1
        }
        return nil
    }
}
