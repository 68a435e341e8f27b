import Foundation

/// A command line split into words as a POSIX shell (and bash, for `$'…'`)
/// splits it, without running or expanding anything: what a person pastes
/// from a browser's "Copy as cURL" or from ``CurlCommand/make(for:)``.
///
/// ```swift
/// let words = try ShellWords.split("curl -H 'A: b' \\\n  \"http://h/\"")
/// // [[.word("curl"), .word("-H"), .word("A: b"), .word("http://h/")]]
/// ```
///
/// Quotes: `'…'` literally; `"…"` with `\` escaping only `$`, `` ` ``, `"`,
/// `\` and a newline; `$'…'` with C escapes. A backslash and a newline
/// outside single quotes join lines; a `#` starting a word comments out the
/// rest of its line. Commands joined by `|` come back one array each.
enum ShellWords {
    /// Why the text cannot be split.
    struct SplitError: Error, Equatable {
        var message: String
    }

    /// The words of each command of a pipeline, in order.
    static func split(_ text: String) throws(SplitError) -> [[String]] {
        var commands: [[String]] = [[]]
        var word = ""
        var inWord = false
        var scalars = Array(text.unicodeScalars)[...]
        func endWord() {
            if inWord { commands[commands.count - 1].append(word) }
            word = ""
            inWord = false
        }
        while let scalar = scalars.popFirst() {
            switch scalar {
            case " ", "\t", "\n", "\r":
                endWord()
            case "|":
                endWord()
                guard !(commands.last?.isEmpty ?? true) else { throw SplitError(message: "a '|' with no command before it") }
                commands.append([])
            case ";", "&", "<", ">", "`", "(", ")":
                throw SplitError(message: "'\(scalar)' outside quotes: paste one curl command (a printf piped into it is fine)")
            case "#" where !inWord:
                while let next = scalars.first, next != "\n" { scalars.removeFirst() }
            case "\\":
                guard let next = scalars.popFirst() else { throw SplitError(message: "a '\\' at the very end") }
                if next == "\n" { continue }
                if next == "\r", scalars.first == "\n" { scalars.removeFirst(); continue }
                word.unicodeScalars.append(next)
                inWord = true
            case "'":
                inWord = true
                guard let end = scalars.firstIndex(of: "'") else { throw SplitError(message: "a ' quote is never closed") }
                word.unicodeScalars.append(contentsOf: scalars[..<end])
                scalars = scalars[(end + 1)...]
            case "\"":
                inWord = true
                try doubleQuoted(&scalars, into: &word)
            case "$" where scalars.first == "'":
                scalars.removeFirst()
                inWord = true
                try ansiQuoted(&scalars, into: &word)
            default:
                word.unicodeScalars.append(scalar)
                inWord = true
            }
        }
        endWord()
        guard commands.last?.isEmpty == false || commands.count == 1 else { throw SplitError(message: "a '|' with no command after it") }
        return commands
    }

    private static func doubleQuoted(_ scalars: inout ArraySlice<Unicode.Scalar>, into word: inout String) throws(SplitError) {
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "\"":
                return
            case "\\":
                guard let next = scalars.popFirst() else { break }
                switch next {
                case "\n": continue
                case "$", "`", "\"", "\\": word.unicodeScalars.append(next)
                default: word.unicodeScalars.append(contentsOf: ["\\", next])
                }
            default:
                word.unicodeScalars.append(scalar)
            }
        }
        throw SplitError(message: "a \" quote is never closed")
    }

    /// bash's `$'…'`, which browsers use for a body with quotes or control characters.
    private static func ansiQuoted(_ scalars: inout ArraySlice<Unicode.Scalar>, into word: inout String) throws(SplitError) {
        var bytes: [UInt8] = []
        func flush() {
            word += String(decoding: bytes, as: UTF8.self)
            bytes = []
        }
        while let scalar = scalars.popFirst() {
            if scalar == "'" {
                flush()
                return
            }
            guard scalar == "\\", let next = scalars.popFirst() else {
                bytes += Array(String(scalar).utf8)
                continue
            }
            switch next {
            case "n": bytes.append(0x0A)
            case "t": bytes.append(0x09)
            case "r": bytes.append(0x0D)
            case "a": bytes.append(0x07)
            case "b": bytes.append(0x08)
            case "e", "E": bytes.append(0x1B)
            case "f": bytes.append(0x0C)
            case "v": bytes.append(0x0B)
            case "x":
                bytes.append(UInt8(digits(&scalars, radix: 16, upTo: 2) ?? 0))
            case "u", "U":
                let value = digits(&scalars, radix: 16, upTo: next == "u" ? 4 : 8) ?? 0
                bytes += Array(String(Unicode.Scalar(UInt32(value)) ?? "\u{FFFD}").utf8)
            case "0"..."7":
                scalars.insert(next, at: scalars.startIndex)
                bytes.append(UInt8(truncatingIfNeeded: digits(&scalars, radix: 8, upTo: 3) ?? 0))
            default:
                bytes += Array(String(next).utf8)
            }
        }
        throw SplitError(message: "a $' quote is never closed")
    }

    /// Up to `limit` digits of `radix` taken from the front, as a number.
    static func digits(_ scalars: inout ArraySlice<Unicode.Scalar>, radix: Int, upTo limit: Int) -> Int? {
        var value: Int?
        for _ in 0..<limit {
            guard let next = scalars.first, let digit = Int(String(next), radix: radix) else { break }
            value = (value ?? 0) * radix + digit
            scalars.removeFirst()
        }
        return value
    }
}
