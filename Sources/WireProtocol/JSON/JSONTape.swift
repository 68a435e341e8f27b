/// One validating pass over a JSON document that records where each value
/// is, and builds none of them: the wire path's reader.
///
/// Every value gets one ``Entry`` in document order (an object's entry is
/// followed by its members, each a key entry then the value's entries), and
/// every entry knows where the entries of its value end (``Entry/next``), so
/// a ``JSONReader`` finds an object's member by hopping from key to key,
/// comparing the key's bytes, and turns only the values the model asks for
/// into strings and numbers, straight from the bytes. No tree, no
/// dictionary, no string for a key or an unread value. The entries live in
/// one array that a decoder keeps from message to message.
///
/// It accepts exactly what ``JSONParser`` accepts (RFC 8259, at most 64
/// levels deep, UTF-8 checked, numbers finite), so anything malformed
/// anywhere in a payload, read or not, is still a malformed payload.
///
/// A version-2 frame's body sections (docs/PROTOCOL.md §2.1) are bytes of the
/// same payload; the tape keeps their ranges so a body is copied out once.
final class JSONTape {
    enum Kind: UInt8 {
        case null, `false`, `true`, number, string, array, object, key
    }

    struct Entry {
        var kind: Kind
        /// Strings and keys: ``hasEscapes``. Numbers: ``isSmallInteger``.
        var flags: UInt8
        /// The value's text: inside the quotes for strings and keys.
        var start: Int32
        var end: Int32
        /// The index of the first entry after this value and all it holds.
        var next: Int32
        /// Arrays: how many elements. Objects: one bit per key
        /// (``keyBit(length:last:)``), so most lookups of an absent member
        /// need no scan. Keys: the index of the object they belong to.
        var count: Int32
    }

    /// The bit of an object's key filter for a key of `length` bytes
    /// ending in `last`.
    @inline(__always)
    static func keyBit(length: Int, last: UInt8) -> Int32 {
        Int32(bitPattern: 1 << ((UInt32(truncatingIfNeeded: length) &* 7 &+ UInt32(last)) & 31))
    }

    /// ``keyBit(length:last:)`` of a key the model looks up.
    @inline(__always)
    static func keyBit(of key: StaticString) -> Int32 {
        let length = key.utf8CodeUnitCount
        return keyBit(length: length, last: length > 0 ? key.utf8Start[length - 1] : 0)
    }

    static let hasEscapes: UInt8 = 1
    /// At most 15 digits, no fraction, no exponent: exact as an Int.
    static let isSmallInteger: UInt8 = 1

    /// The value of a number's exponent digits (after the `e` and its
    /// sign); nil beyond three, which no finite Double needs.
    static func exponentValue(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard digits.count <= 3 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) }
    }

    private(set) var bytes = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// The loaded document's entries: ``entryCount`` of ``entryStorage``'s
    /// ``entryCapacity``, kept from document to document.
    private var entryStorage: UnsafeMutablePointer<Entry>
    private var entryCapacity: Int
    private(set) var entryCount = 0
    /// Body sections of a version-2 payload, as ranges of ``bytes``.
    private(set) var sections: [Range<Int>] = []

    /// Where the next member lookup starts (``JSONReader/member(_:)``).
    private let hint = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    init() {
        hint.initialize(to: 0)
        entryCapacity = 64
        entryStorage = .allocate(capacity: entryCapacity)
    }

    deinit {
        hint.deallocate()
        entryStorage.deallocate()
    }

    /// The loaded document's entries.
    var entries: UnsafeBufferPointer<Entry> { UnsafeBufferPointer(start: entryStorage, count: entryCount) }

    /// Records the document in `bytes[json]`. `bytes` must stay valid while
    /// readers of this tape are used; the tape forgets the last document.
    func load(_ bytes: UnsafeBufferPointer<UInt8>, json: Range<Int>, sections: [Range<Int>] = []) throws(WireError) {
        self.bytes = bytes
        self.sections = sections
        entryCount = 0
        // Entries hold offsets as Int32 (``Builder/offset(_:)``).
        guard json.upperBound < Int(Int32.max) else { throw .malformedPayload("a JSON payload of 2 GiB or more") }
        var builder = Builder(bytes: bytes, index: json.lowerBound, end: json.upperBound,
                              entries: EntryBuffer(storage: entryStorage, capacity: entryCapacity))
        // Whatever happens, the tape keeps the (possibly grown) storage.
        defer {
            entryStorage = builder.entries.storage
            entryCapacity = builder.entries.capacity
        }
        builder.skipWhitespace()
        try builder.value()
        builder.skipWhitespace()
        guard builder.index == json.upperBound else { throw builder.invalid("unexpected data after the JSON value") }
        entryCount = builder.entries.count
    }

    /// Calls `body` with a reader of the loaded document's top-level value.
    /// Readers hold the tape's storage without retaining it: they live only
    /// inside `body`.
    func read<T, Failure: Error>(_ body: (JSONReader) throws(Failure) -> T) throws(Failure) -> T {
        hint.pointee = 1  // the top-level object's first key
        return try sections.withUnsafeBufferPointer { sections throws(Failure) -> T in
            let document = JSONDocument(bytes: bytes, entries: entries, sections: sections, hint: hint)
            return try withUnsafePointer(to: document) { document throws(Failure) -> T in try body(JSONReader(document, at: 0)) }
        }
    }

    /// Entries being written: a pointer and a count, grown by doubling. An
    /// append is a compare and a store (no uniqueness check, no bounds
    /// check beyond the capacity's), which is most of what a scan does.
    private struct EntryBuffer {
        var storage: UnsafeMutablePointer<Entry>
        var capacity: Int
        var count = 0

        @inline(__always)
        mutating func append(_ entry: Entry) {
            if count == capacity { grow() }
            (storage + count).initialize(to: entry)
            count += 1
        }

        private mutating func grow() {
            let larger = UnsafeMutablePointer<Entry>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: storage, count: count)
            storage.deallocate()
            storage = larger
            capacity *= 2
        }
    }

    /// Scans one document into entries; validates as it goes.
    private struct Builder {
        let bytes: UnsafeBufferPointer<UInt8>
        var index: Int
        let end: Int
        var depth = 0
        static let maximumDepth = 64

        var entries: EntryBuffer

        init(bytes: UnsafeBufferPointer<UInt8>, index: Int, end: Int, entries: EntryBuffer) {
            self.bytes = bytes
            self.index = index
            self.end = end
            self.entries = entries
        }

        /// An offset or an entry index as an entry stores it: ``load(_:json:sections:)``
        /// refuses documents that would not fit, and every entry takes a byte.
        @inline(__always)
        func offset(_ value: Int) -> Int32 { Int32(truncatingIfNeeded: value) }

        func invalid(_ reason: String) -> WireError {
            .malformedPayload("not valid JSON (\(reason) at byte \(index))")
        }

        /// Compact JSON (what this library writes) has no whitespace
        /// between tokens: one compare then, as every byte that is
        /// whitespace is at most a space.
        @inline(__always)
        mutating func skipWhitespace() {
            guard index < end, bytes[index] <= 0x20 else { return }
            skipWhitespaceBytes()
        }

        private mutating func skipWhitespaceBytes() {
            while index < end {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func value() throws(WireError) {
            guard index < end else { throw invalid("unexpected end") }
            let start = index
            switch bytes[index] {
            case UInt8(ascii: "{"): try container(.object)
            case UInt8(ascii: "["): try container(.array)
            case UInt8(ascii: "\""): try string(as: .string)
            case UInt8(ascii: "t"): try literal("true"); append(.true, 0, start)
            case UInt8(ascii: "f"): try literal("false"); append(.false, 0, start)
            case UInt8(ascii: "n"): try literal("null"); append(.null, 0, start)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let flags = try number()
                append(.number, flags, start)
            default: throw invalid("unexpected character")
            }
        }

        private mutating func append(_ kind: Kind, _ flags: UInt8, _ start: Int) {
            entries.append(Entry(kind: kind, flags: flags, start: offset(start), end: offset(index),
                                 next: offset(entries.count + 1), count: 0))
        }

        private mutating func literal(_ text: StaticString) throws(WireError) {
            let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            guard end - index >= expected.count, bytes[index ..< index + expected.count].elementsEqual(expected) else {
                throw invalid("unexpected character")
            }
            index += expected.count
        }

        private mutating func nest() throws(WireError) {
            depth += 1
            guard depth <= Self.maximumDepth else { throw invalid("nested deeper than \(Self.maximumDepth) levels") }
        }

        /// An object or an array: its entry, then its members' or elements'.
        private mutating func container(_ kind: Kind) throws(WireError) {
            try nest()
            defer { depth -= 1 }
            let isObject = kind == .object
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let me = entries.count
            entries.append(Entry(kind: kind, flags: 0, start: offset(index), end: 0, next: 0, count: 0))
            index += 1
            var count: Int32 = 0
            var keys: Int32 = 0
            skipWhitespace()
            if index < end, bytes[index] == close {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    if isObject {
                        guard index < end, bytes[index] == UInt8(ascii: "\"") else { throw invalid("expected a member name") }
                        try string(as: .key, owner: me)
                        let key = entries.storage[entries.count - 1]
                        let length = Int(key.end - key.start)
                        keys |= key.flags & JSONTape.hasEscapes != 0 ? -1
                            : JSONTape.keyBit(length: length, last: length > 0 ? bytes[Int(key.end) - 1] : 0)
                        skipWhitespace()
                        guard index < end, bytes[index] == UInt8(ascii: ":") else { throw invalid("expected ':'") }
                        index += 1
                        skipWhitespace()
                    }
                    try value()
                    count += 1
                    skipWhitespace()
                    guard index < end else { throw invalid("unexpected end") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == close { index += 1; break }
                    throw invalid(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
            }
            entries.storage[me].end = offset(index)
            entries.storage[me].next = offset(entries.count)
            entries.storage[me].count = isObject ? keys : count
        }

        private mutating func string(as kind: Kind, owner: Int = 0) throws(WireError) {
            index += 1
            let start = index
            let hasEscapes = try JSONEscapes.scanString(bytes, at: &index, end: end)
            entries.append(Entry(kind: kind, flags: hasEscapes ? JSONTape.hasEscapes : 0, start: offset(start),
                                 end: offset(index - 1), next: offset(entries.count + 1), count: offset(owner)))
        }

        /// Checks a number's syntax and range.
        private mutating func number() throws(WireError) -> UInt8 {
            let start = index
            var isInteger = true
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            skipDigits()
            let integerDigits = index - digitsStart
            guard integerDigits > 0 else { throw invalid("bad number") }
            guard integerDigits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { throw invalid("leading zero in number") }
            if index < end, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                let fractionStart = index
                skipDigits()
                guard index > fractionStart else { throw invalid("bad number") }
            }
            // How far a positive exponent can move the point (a negative one
            // only makes the number smaller, and finite).
            var exponentReach = 0
            if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                let isNegative = index < end && bytes[index] == UInt8(ascii: "-")
                if index < end, bytes[index] == UInt8(ascii: "+") || isNegative { index += 1 }
                let exponentStart = index
                skipDigits()
                guard index > exponentStart else { throw invalid("bad number") }
                if !isNegative { exponentReach = JSONTape.exponentValue(bytes[exponentStart ..< index]) ?? .max / 2 }
            }
            if isInteger && integerDigits <= 15 { return JSONTape.isSmallInteger }
            // Only some 309 digits before the point, exponent included, leave Double's range.
            if integerDigits + exponentReach > 300 {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< index]), as: UTF8.self)
                guard let value = Double(text), value.isFinite else { throw invalid("number out of range") }
            }
            return 0
        }

        private mutating func skipDigits() {
            while index < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
