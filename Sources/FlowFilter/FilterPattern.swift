import Foundation

/// The argument of a filter operator, compiled once for matching many flows.
///
/// A pattern is case-insensitive. Most arguments people type are plain
/// words (`api`, `example.com`, `\.json$`), so a pattern that is ASCII text
/// with at most `.`, escaped punctuation and a leading `^` or trailing `$` is
/// matched by a ``ByteNeedle`` that needs no decoding or bridging. Anything
/// else is compiled for `NSRegularExpression`, behind a pre-filter: the
/// longest piece of text every match must contain is looked for first, so
/// most flows are rejected without running anything more. Patterns without
/// groups then run on ASCII text as a ``ByteRegex``; the engine takes the rest.
///
/// Answers are ICU's in every case: when the byte scan cannot be sure
/// (non-ASCII text, where Unicode case folding equates `ß` with `ss`), the
/// engine decides.
package struct FilterPattern: Sendable, Equatable, CustomStringConvertible {
    /// One reference, so that the copies made while matching cost one retain.
    private let storage: Storage

    private final class Storage: Sendable {
        let source: String
        let isRegularExpression: Bool
        let matcher: Matcher
        /// The byte needle, when no match of it can contain the `": "` of a
        /// header line, so the name and the value can be searched apart.
        let halfLineNeedle: ByteNeedle?
        /// For a needle like `^server: …`, the folded header name it requires.
        let requiredHeaderName: [UInt8]?
        /// The needle and its sides, when it holds `": "` (see ``ByteNeedle/separatorSides``).
        let separatorNeedle: (needle: ByteNeedle, left: [UInt8], right: [UInt8])?

        init(source: String, isRegularExpression: Bool, matcher: Matcher) {
            self.source = source
            self.isRegularExpression = isRegularExpression
            self.matcher = matcher
            guard case .bytes(let needle, _) = matcher else {
                halfLineNeedle = nil
                requiredHeaderName = nil
                separatorNeedle = nil
                return
            }
            halfLineNeedle = needle.staysOnOneSideOfHeaderSeparator ? needle : nil
            requiredHeaderName = needle.requiredHeaderName
            separatorNeedle = needle.separatorSides.map { (needle, $0.left, $0.right) }
        }
    }

    /// The argument as written (after unquoting).
    package var source: String { storage.source }
    /// Whether ``source`` is a regular expression (`~u`, `~h`…) or plain text (`~d`, `/`).
    package var isRegularExpression: Bool { storage.isRegularExpression }
    private var matcher: Matcher { storage.matcher }

    private enum Matcher: Sendable {
        /// The scan, and the engine for what it leaves undecided (`nil`
        /// when it never does: a needle without letters).
        case bytes(ByteNeedle, undecided: CompiledRegex?)
        case regex(CompiledRegex)
    }

    /// A pattern that matches `text` as a case-insensitive substring.
    package init(literal text: String) {
        // An escaped pattern always compiles, hence the `try!`.
        let regex = { try! CompiledRegex(NSRegularExpression.escapedPattern(for: text), prefilter: nil) }
        let matcher: Matcher
        if let needle = ByteNeedle(literal: text) {
            matcher = .bytes(needle, undecided: needle.hasLetters ? regex() : nil)
        } else {
            matcher = .regex(regex())
        }
        storage = Storage(source: text, isRegularExpression: false, matcher: matcher)
    }

    /// A pattern for a case-insensitive regular expression (ICU syntax).
    /// - Throws: ``InvalidRegularExpression`` when `source` does not compile.
    package init(regularExpression source: String) throws(InvalidRegularExpression) {
        let matcher: Matcher
        if let needle = RegexTranslation.exactNeedle(for: source) {
            matcher = .bytes(needle, undecided: needle.hasLetters ? try CompiledRegex(source, prefilter: nil) : nil)
        } else {
            matcher = .regex(try CompiledRegex(source, prefilter: RegexTranslation.requiredLiteral(in: source), byteRegex: ByteRegex(source)))
        }
        storage = Storage(source: source, isRegularExpression: true, matcher: matcher)
    }

    /// A regular expression that does not compile.
    package struct InvalidRegularExpression: Error, Sendable, Equatable {
        /// The engine's explanation, when it gave one.
        package var reason: String
    }

    package static func == (lhs: FilterPattern, rhs: FilterPattern) -> Bool {
        lhs.source == rhs.source && lhs.isRegularExpression == rhs.isRegularExpression
    }

    package var description: String { source }

    /// Whether the pattern is matched without the regular expression engine.
    var usesByteScan: Bool {
        if case .bytes = matcher { true } else { false }
    }

    /// Whether ASCII text is matched by a ``ByteRegex`` rather than the engine.
    var usesByteRegex: Bool {
        if case .regex(let regex) = matcher { regex.byteRegex != nil } else { false }
    }

    // MARK: Matching

    /// Whether the pattern occurs in `text`.
    package func matches(_ text: String) -> Bool {
        switch matcher {
        case let .bytes(needle, undecided):
            switch withUTF8(text, needle.search) {
            case .found: true
            case .absent: false
            case .undecided: undecided?.matches(text) ?? false
            }
        case .regex(let regex):
            regex.matches(text)
        }
    }

    /// Whether the pattern occurs in UTF-8 `bytes` (invalid sequences read as U+FFFD).
    func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch matcher {
        case let .bytes(needle, undecided):
            switch needle.search(bytes) {
            case .found: true
            case .absent: false
            case .undecided: undecided?.matches(utf8: bytes) ?? false
            }
        case .regex(let regex):
            regex.matches(utf8: bytes)
        }
    }

    /// Whether the pattern occurs in the header line `name: value`, found
    /// from the two halves; `nil` when only the whole line can tell.
    func matchesHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Bool? {
        if let required = storage.requiredHeaderName,
           !name.contains(where: { $0 == UInt8(ascii: ":") || $0 >= 0x80 }),
           name.count != required.count || zip(name, required).contains(where: { ByteNeedle.foldASCII($0) != $1 }) {
            return false
        }
        if let split = storage.separatorNeedle {
            // ASCII only: there the byte search is exact, never undecided.
            guard !name.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: ":") }), !value.contains(where: { $0 >= 0x80 }) else { return nil }
            let onSeparator = name.count >= split.left.count && value.count >= split.right.count
                && zip(name.suffix(split.left.count), split.left).allSatisfy { ByteNeedle.foldASCII($0) == $1 }
                && zip(value.prefix(split.right.count), split.right).allSatisfy { ByteNeedle.foldASCII($0) == $1 }
            // A needle starting with a space may also begin on the separator's space.
            let bytes = split.needle.bytes
            let fromSeparatorSpace = bytes.first == UInt8(ascii: " ") && value.count >= bytes.count - 1
                && zip(value, bytes.dropFirst()).allSatisfy { ByteNeedle.foldASCII($0) == $1 }
            return onSeparator || fromSeparatorSpace || split.needle.search(value) == .found
        }
        guard let needle = storage.halfLineNeedle else { return nil }
        // `^` can only match in the name, `$` only in the value.
        let inName = needle.anchoredAtEnd ? .absent : needle.search(name)
        if inName == .found { return true }
        let inValue = needle.anchoredAtStart ? .absent : needle.search(value)
        if inValue == .found { return true }
        return inName == .undecided || inValue == .undecided ? nil : false
    }

    /// Whether the pattern occurs in `data` read as UTF-8 text. Only a
    /// regular expression whose pre-filter passes decodes the bytes.
    func matches(utf8 data: Data) -> Bool {
        data.withUnsafeBytes { matches(utf8: $0.bindMemory(to: UInt8.self)) }
    }
}

/// A compiled, case-insensitive `NSRegularExpression`, its pre-filter and,
/// when the pattern allows, its ``ByteRegex`` for ASCII text.
///
/// `NSRegularExpression` is immutable after creation and documented as safe
/// to use from several threads at once (corelibs checks out a private ICU
/// matcher per call), which is what makes this wrapper `Sendable`.
private struct CompiledRegex: @unchecked Sendable {
    let regex: NSRegularExpression
    /// Text every match contains (see ``RegexTranslation/requiredLiteral(in:)``).
    let prefilter: ByteNeedle?
    let byteRegex: ByteRegex?

    /// Compiles `pattern`; the engine alone judges whether it is valid.
    init(_ pattern: String, prefilter: ByteNeedle?, byteRegex: ByteRegex? = nil) throws(FilterPattern.InvalidRegularExpression) {
        do {
            regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
        } catch {
            throw FilterPattern.InvalidRegularExpression(reason: (error as NSError).localizedDescription)
        }
        self.prefilter = prefilter
        self.byteRegex = byteRegex
    }

    func matches(_ text: String) -> Bool {
        switch withUTF8(text, quickAnswer) {
        case .some(let answer): answer
        case nil: engineMatches(text)
        }
    }

    func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        quickAnswer(bytes) ?? engineMatches(String(decoding: bytes, as: UTF8.self))
    }

    /// The answer without the engine, when the pre-filter or the byte
    /// regex can give it.
    private func quickAnswer(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        if let prefilter, prefilter.search(bytes) == .absent { return false }
        return byteRegex?.matches(bytes)
    }

    private func engineMatches(_ text: String) -> Bool {
        let range = NSRange(location: 0, length: text.utf16.count)
        return regex.rangeOfFirstMatch(in: text, options: [], range: range).location != NSNotFound
    }
}
