import Foundation

/// Runs `body`, adding `component` to the path of any error it throws; the
/// component is only built then.
@inline(__always)
func within<T>(_ component: @autoclosure () -> String, _ body: () throws(JSONFieldError) -> T) throws(JSONFieldError) -> T {
    do {
        return try body()
    } catch {
        var error = error
        error.reversedPath.append(component())
        throw error
    }
}

/// A loaded ``JSONTape`` as plain pointers: what readers share while the
/// model reads one payload (no reference counting, no exclusivity checks).
struct JSONDocument {
    let bytes: UnsafeBufferPointer<UInt8>
    let entries: UnsafeBufferPointer<JSONTape.Entry>
    /// Body sections of a version-2 payload, as ranges of ``bytes``.
    let sections: UnsafeBufferPointer<Range<Int>>
    /// The key after the member found last: the model reads members in the
    /// order the writer wrote them, so a lookup usually starts on its key.
    let hint: UnsafeMutablePointer<Int>

    /// The UTF-8 bytes of an entry's text.
    func text(of entry: JSONTape.Entry) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[Int(entry.start) ..< Int(entry.end)])
    }

    /// A string or key entry as a String, escapes resolved.
    func string(of entry: JSONTape.Entry) -> String {
        let raw = text(of: entry)
        guard entry.flags & JSONTape.hasEscapes != 0 else { return String(decoding: raw, as: UTF8.self) }
        return String(decoding: JSONEscapes.unescape(raw), as: UTF8.self)
    }

    /// Whether the key entry at `index` is `key`. (Inlined into
    /// ``JSONReader/member(_:)``, its only caller's hot path.)
    @inline(__always)
    func key(at index: Int, is key: StaticString) -> Bool {
        let entry = entries[index]
        guard entry.flags & JSONTape.hasEscapes == 0 else { return string(of: entry) == key.description }
        let count = Int(entry.end - entry.start)
        guard count == key.utf8CodeUnitCount, let base = bytes.baseAddress else { return count == key.utf8CodeUnitCount }
        return Self.equalBytes(UnsafeRawPointer(base + Int(entry.start)), UnsafeRawPointer(key.utf8Start), count: count)
    }

    /// Whether `count` bytes at `a` and `b` are equal: for a key's few
    /// bytes, two loads a side that may overlap (a loop went byte by byte).
    @inline(__always)
    static func equalBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        func same<Word: FixedWidthInteger>(_: Word.Type) -> Bool {
            let last = count - MemoryLayout<Word>.size
            return a.loadUnaligned(as: Word.self) == b.loadUnaligned(as: Word.self)
                && a.loadUnaligned(fromByteOffset: last, as: Word.self) == b.loadUnaligned(fromByteOffset: last, as: Word.self)
        }
        switch count {
        case 0: return true
        case 1: return a.load(as: UInt8.self) == b.load(as: UInt8.self)
        case 2 ... 3: return same(UInt16.self)
        case 4 ... 7: return same(UInt32.self)
        case 8 ... 16: return same(UInt64.self)
        default: return memcmp(a, b, count) == 0
        }
    }

    /// The first key `key` of the object at `object` among its keys from
    /// `from` (one of them) up to `to`.
    @inline(__always)
    func find(_ key: StaticString, from: Int, to: Int) -> Int? {
        var position = from
        while position < to {
            if self.key(at: position, is: key) { return position }
            position = Int(entries[position + 1].next)
        }
        return nil
    }
}

/// Typed access to one value of a ``JSONTape``: members found by comparing
/// key bytes, values built straight from the bytes into the model.
///
/// ```swift
/// let tape = JSONTape()
/// try tape.load(bytes, json: 0 ..< bytes.count)
/// let type = try tape.read { json throws(JSONFieldError) in try json.string("type") }
/// ```
struct JSONReader {
    /// Two words, so that readers pass and return in registers: the model
    /// makes one for every member it reads.
    private let document: UnsafePointer<JSONDocument>
    let index: Int

    init(_ document: UnsafePointer<JSONDocument>, at index: Int) {
        self.document = document
        self.index = index
    }

    var tape: JSONDocument { document.pointee }

    private var entry: JSONTape.Entry { tape.entries[index] }

    var typeName: String {
        switch entry.kind {
        case .null: "null"
        case .true, .false: "a boolean"
        case .number: "a number"
        case .string, .key: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    var isObject: Bool { entry.kind == .object }

    func mismatch(_ expected: String) -> JSONFieldError {
        JSONFieldError(problem: .mismatch(expected: expected, found: typeName))
    }

    /// The member `key` when present and not null. Of a repeated member
    /// (which RFC 8259 leaves undefined, and writers here never write) any
    /// one may be taken.
    @inline(__always)
    func member(_ key: StaticString) throws(JSONFieldError) -> JSONReader? {
        // The member after the one found last is usually the one asked for:
        // that case is inlined into the caller, and the search is not.
        let entries = tape.entries
        let hint = tape.hint.pointee
        if hint < entries.count, entries[hint].kind == .key, Int(entries[hint].count) == index, tape.key(at: hint, is: key) {
            return found(at: hint + 1)
        }
        // Most absent members are absent from the object's key filter too.
        let object = entries[index]
        if object.kind == .object, object.count & JSONTape.keyBit(of: key) == 0 { return nil }
        return try search(key)
    }

    /// ``member(_:)`` when neither the hint nor the key filter settles it:
    /// the object's keys from the hint on, then those before it.
    @inline(never)
    private func search(_ key: StaticString) throws(JSONFieldError) -> JSONReader? {
        let object = entry
        guard object.kind == .object else { throw mismatch("an object") }
        let first = index + 1
        let end = Int(object.next)
        // Start at the hint when it is one of this object's keys, then wrap around.
        var start = tape.hint.pointee
        if start <= index || start >= end || tape.entries[start].kind != .key || Int(tape.entries[start].count) != index {
            start = first
        }
        guard let position = tape.find(key, from: start, to: end) ?? (start > first ? tape.find(key, from: first, to: start) : nil)
        else { return nil }
        return found(at: position + 1)
    }

    /// The member whose value is at `value`. The next lookup is hinted at
    /// the key after it, or, when the value is an object, at the object's
    /// first key: the model reads an object it looked up straight away, and
    /// once it has, the hint has moved past the object to the key after it.
    @inline(__always)
    private func found(at value: Int) -> JSONReader? {
        let entry = tape.entries[value]
        tape.hint.pointee = entry.kind == .object ? value + 1 : Int(entry.next)
        return entry.kind == .null ? nil : JSONReader(document, at: value)
    }

    func required(_ key: StaticString) throws(JSONFieldError) -> JSONReader {
        guard let member = try member(key) else { throw JSONFieldError(problem: .missing(key.description)) }
        return member
    }

    var string: String {
        get throws(JSONFieldError) {
            let entry = entry
            guard entry.kind == .string else { throw mismatch("a string") }
            return tape.string(of: entry)
        }
    }
    /// Calls `body` with a string value's UTF-8 bytes, escapes resolved,
    /// without making a String of them.
    func withStringBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) throws(JSONFieldError) -> T {
        let entry = entry
        guard entry.kind == .string else { throw mismatch("a string") }
        guard entry.flags & JSONTape.hasEscapes != 0 else { return body(tape.text(of: entry)) }
        return JSONEscapes.unescape(tape.text(of: entry)).withUnsafeBufferPointer(body)
    }

    var double: Double {
        get throws(JSONFieldError) {
            let entry = entry
            guard entry.kind == .number else { throw mismatch("a number") }
            return tape.double(of: entry)
        }
    }
    var bool: Bool {
        get throws(JSONFieldError) {
            switch entry.kind {
            case .true: return true
            case .false: return false
            default: throw mismatch("a boolean")
            }
        }
    }
    var int: Int {
        get throws(JSONFieldError) {
            let entry = entry
            guard entry.kind == .number else { throw mismatch("an integer") }
            if entry.flags & JSONTape.isSmallInteger != 0 { return tape.smallInteger(of: entry) }
            let number = tape.double(of: entry)
            guard number == number.rounded(), abs(number) <= 9_007_199_254_740_992 else { throw mismatch("an integer") }
            return Int(number)
        }
    }

    /// The bytes of the version-2 body section this value numbers.
    var section: Data {
        get throws(JSONFieldError) {
            let number = try int
            guard number >= 0, number < tape.sections.count else {
                throw JSONFieldError(problem: .invalid("no body section \(number) in this frame"))
            }
            let range = tape.sections[number]
            return Data(UnsafeBufferPointer(rebasing: tape.bytes[range]))
        }
    }

    func string(_ key: StaticString) throws(JSONFieldError) -> String { try within(key.description) { () throws(JSONFieldError) in try required(key).string } }
    func int(_ key: StaticString) throws(JSONFieldError) -> Int { try within(key.description) { () throws(JSONFieldError) in try required(key).int } }
    func double(_ key: StaticString) throws(JSONFieldError) -> Double { try within(key.description) { () throws(JSONFieldError) in try required(key).double } }
    func bool(_ key: StaticString) throws(JSONFieldError) -> Bool { try within(key.description) { () throws(JSONFieldError) in try required(key).bool } }
    func optionalString(_ key: StaticString) throws(JSONFieldError) -> String? { try within(key.description) { () throws(JSONFieldError) in try member(key)?.string } }
    func optionalInt(_ key: StaticString) throws(JSONFieldError) -> Int? { try within(key.description) { () throws(JSONFieldError) in try member(key)?.int } }
    func optionalDouble(_ key: StaticString) throws(JSONFieldError) -> Double? { try within(key.description) { () throws(JSONFieldError) in try member(key)?.double } }
    func optionalBool(_ key: StaticString) throws(JSONFieldError) -> Bool? { try within(key.description) { () throws(JSONFieldError) in try member(key)?.bool } }

    /// An array member that may be absent (or null): nil then.
    func optionalArray<T: JSONReadable>(_ key: StaticString, of type: T.Type = T.self) throws(JSONFieldError) -> [T]? {
        guard try member(key) != nil else { return nil }
        return try array(key)
    }

    func decode<T: JSONReadable>(_ key: StaticString, as type: T.Type = T.self) throws(JSONFieldError) -> T {
        let member = try required(key)
        return try within(key.description) { () throws(JSONFieldError) in try T(json: member) }
    }

    func decodeIfPresent<T: JSONReadable>(_ key: StaticString, as type: T.Type = T.self) throws(JSONFieldError) -> T? {
        guard let member = try member(key) else { return nil }
        return try within(key.description) { () throws(JSONFieldError) in try T(json: member) }
    }

    func array<T: JSONReadable>(_ key: StaticString, of type: T.Type = T.self) throws(JSONFieldError) -> [T] {
        let member = try required(key)
        return try within(key.description) { () throws(JSONFieldError) in
            let array = member.entry
            guard array.kind == .array else { throw member.mismatch("an array") }
            var result: [T] = []
            result.reserveCapacity(Int(array.count))
            var position = member.index + 1
            while position < Int(array.next) {
                let element = JSONReader(document, at: position)
                tape.hint.pointee = position + 1  // an object element's first key
                result.append(try within("[\(result.count)]") { () throws(JSONFieldError) in try T(json: element) })
                position = Int(tape.entries[position].next)
            }
            return result
        }
    }
}
