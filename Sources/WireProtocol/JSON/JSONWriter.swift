import Foundation

/// Writes JSON straight into a byte buffer: the encoding half of the wire
/// path's fast JSON (see ``JSONValue`` for why it exists).
struct JSONWriter {
    /// What was written. A caller that keeps one buffer for many frames
    /// swaps it in and out (see ``FrameEncoder/encode(_:appendingTo:)``).
    var bytes: [UInt8] = []
    private var needsComma = false

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    mutating func object(_ body: (inout JSONWriter) -> Void) {
        let outer = needsComma
        needsComma = false
        bytes.append(UInt8(ascii: "{"))
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = outer
    }

    mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }
    mutating func field(_ name: StaticString, _ value: Int) { key(name); bytes.append(contentsOf: String(value).utf8) }
    mutating func field(_ name: StaticString, _ value: Double) { key(name); number(value) }
    mutating func field(_ name: StaticString, _ value: Bool) { key(name); bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8)) }
    mutating func field(_ name: StaticString, _ value: some JSONWritable) { key(name); value.write(to: &self) }

    mutating func field(_ name: StaticString, _ value: String?) { if let value { field(name, value) } }
    mutating func field(_ name: StaticString, _ value: Double?) { if let value { field(name, value) } }
    mutating func field(_ name: StaticString, _ value: (some JSONWritable)?) { if let value { field(name, value) } }

    mutating func field(_ name: StaticString, _ values: [some JSONWritable]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            value.write(to: &self)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Shortest text that reads back as the same Double; non-finite values,
    /// which JSON cannot carry, are written as 0.
    mutating func number(_ value: Double) {
        guard value.isFinite else { bytes.append(UInt8(ascii: "0")); return }
        if value == value.rounded(), abs(value) < 1e15 {
            bytes.append(contentsOf: String(Int(value)).utf8)
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    /// A UUID in its canonical upper-case form, without `printf`.
    mutating func uuid(_ uuid: UUID) {
        let hex = Array("0123456789ABCDEF".utf8)
        bytes.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var utf8 = value.utf8
        // Most strings need no escaping: copy them in one go.
        let plain = utf8.withContiguousStorageIfAvailable { buffer in
            !buffer.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if plain == true {
            bytes.append(contentsOf: utf8)
        } else {
            if plain == nil {
                var copy = value
                copy.makeContiguousUTF8()
                utf8 = copy.utf8
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                              hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A type that writes itself with ``JSONWriter``.
protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

/// A type that reads itself from a parsed JSON value.
protocol JSONReadable {
    init(json: JSONReader) throws(JSONFieldError)
}

/// Why a parsed value does not fit the model. The path is collected while
/// the error travels up (innermost component first), so a successful read
/// never builds a path string.
struct JSONFieldError: Error {
    enum Problem {
        case missing(String)
        case mismatch(expected: String, found: String)
        case invalid(String)
    }

    var problem: Problem
    var reversedPath: [String] = []

    var wireError: WireError {
        var path = ""
        for component in reversedPath.reversed() {
            path += component.hasPrefix("[") || path.isEmpty ? component : "." + component
        }
        switch problem {
        case .missing(let key): return .malformedPayload("missing field '\(key)' at \(path.isEmpty ? "top level" : path)")
        case let .mismatch(expected, found): return .malformedPayload("\(path.isEmpty ? "top level" : path): expected \(expected), found \(found)")
        case .invalid(let reason): return .malformedPayload("\(path.isEmpty ? "top level" : path): \(reason)")
        }
    }
}

/// Runs `body`, adding `component` to the path of any error it throws.
@inline(__always)
func within<T>(_ component: String, _ body: () throws(JSONFieldError) -> T) throws(JSONFieldError) -> T {
    do {
        return try body()
    } catch {
        var error = error
        error.reversedPath.append(component)
        throw error
    }
}

/// Typed access to a parsed JSON value.
struct JSONReader {
    let value: JSONValue

    init(_ value: JSONValue) { self.value = value }

    func mismatch(_ expected: String) -> JSONFieldError {
        JSONFieldError(problem: .mismatch(expected: expected, found: value.typeName))
    }

    /// The member `key` when present and not null.
    func member(_ key: String) throws(JSONFieldError) -> JSONReader? {
        guard case .object(let members) = value else { throw mismatch("an object") }
        for member in members where member.key == key {
            if case .null = member.value { return nil }
            return JSONReader(member.value)
        }
        return nil
    }

    func required(_ key: String) throws(JSONFieldError) -> JSONReader {
        guard let member = try member(key) else { throw JSONFieldError(problem: .missing(key)) }
        return member
    }

    var string: String { get throws(JSONFieldError) { if case .string(let text) = value { return text }; throw mismatch("a string") } }
    var double: Double { get throws(JSONFieldError) { if case .number(let number) = value { return number }; throw mismatch("a number") } }
    var bool: Bool { get throws(JSONFieldError) { if case .bool(let flag) = value { return flag }; throw mismatch("a boolean") } }
    var int: Int {
        get throws(JSONFieldError) {
            guard case .number(let number) = value, number == number.rounded(), abs(number) <= 9_007_199_254_740_992 else {
                throw mismatch("an integer")
            }
            return Int(number)
        }
    }

    func string(_ key: String) throws(JSONFieldError) -> String { try within(key) { () throws(JSONFieldError) in try required(key).string } }
    func int(_ key: String) throws(JSONFieldError) -> Int { try within(key) { () throws(JSONFieldError) in try required(key).int } }
    func double(_ key: String) throws(JSONFieldError) -> Double { try within(key) { () throws(JSONFieldError) in try required(key).double } }
    func bool(_ key: String) throws(JSONFieldError) -> Bool { try within(key) { () throws(JSONFieldError) in try required(key).bool } }
    func optionalString(_ key: String) throws(JSONFieldError) -> String? { try within(key) { () throws(JSONFieldError) in try member(key)?.string } }
    func optionalInt(_ key: String) throws(JSONFieldError) -> Int? { try within(key) { () throws(JSONFieldError) in try member(key)?.int } }
    func optionalDouble(_ key: String) throws(JSONFieldError) -> Double? { try within(key) { () throws(JSONFieldError) in try member(key)?.double } }
    func optionalBool(_ key: String) throws(JSONFieldError) -> Bool? { try within(key) { () throws(JSONFieldError) in try member(key)?.bool } }

    /// An array member that may be absent (or null): nil then.
    func optionalArray<T: JSONReadable>(_ key: String, of type: T.Type = T.self) throws(JSONFieldError) -> [T]? {
        guard try member(key) != nil else { return nil }
        return try array(key)
    }

    func decode<T: JSONReadable>(_ key: String, as type: T.Type = T.self) throws(JSONFieldError) -> T {
        let member = try required(key)
        return try within(key) { () throws(JSONFieldError) in try T(json: member) }
    }

    func decodeIfPresent<T: JSONReadable>(_ key: String, as type: T.Type = T.self) throws(JSONFieldError) -> T? {
        guard let member = try member(key) else { return nil }
        return try within(key) { () throws(JSONFieldError) in try T(json: member) }
    }

    func array<T: JSONReadable>(_ key: String, of type: T.Type = T.self) throws(JSONFieldError) -> [T] {
        let member = try required(key)
        return try within(key) { () throws(JSONFieldError) in
            guard case .array(let elements) = member.value else { throw member.mismatch("an array") }
            var result: [T] = []
            result.reserveCapacity(elements.count)
            for (position, element) in elements.enumerated() {
                result.append(try within("[\(position)]") { () throws(JSONFieldError) in try T(json: JSONReader(element)) })
            }
            return result
        }
    }
}
