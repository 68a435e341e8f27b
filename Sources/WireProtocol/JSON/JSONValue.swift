/// A parsed JSON tree, for the viewer's own uses of JSON (HAR files, body
/// views, diffs): where a whole document is wanted as values.
///
/// The wire path builds no tree: it reads payloads through ``JSONTape`` and
/// ``JSONReader`` and writes them with ``JSONWriter``, not through
/// `JSONDecoder`, whose generic machinery goes through a container and
/// coding keys for every member (docs/BENCHMARKS.md, "Costs behind the code").
/// The model has no `Codable` conformance: WireJSON is its one codec. Both
/// readers accept exactly the same documents (`JSONTapeTests`).
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order. Objects on the wire have a dozen keys at
    /// most, where a linear scan beats hashing.
    case object([JSONMember])

    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One member of a JSON object.
package struct JSONMember: Sendable, Equatable {
    package let key: String
    package let value: JSONValue
}

/// Parses one JSON document (RFC 8259) from UTF-8 bytes.
package struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private static let maximumDepth = 64

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses `bytes` as exactly one JSON value, with optional surrounding
    /// whitespace.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.invalid("unexpected data after the JSON value") }
        return value
    }

    /// Calls `body` with each element of the array found by following the
    /// object keys in `path` from the top level, one element at a time: only
    /// one element's tree is alive at once, so a 200 MB HAR file is read in
    /// little more memory than its bytes.
    /// - Throws: ``WireError/malformedPayload(_:)`` for invalid JSON or when
    ///   the path does not lead to an array; whatever `body` throws.
    package static func forEachElement(
        ofArrayAt path: [String], in bytes: UnsafeBufferPointer<UInt8>, _ body: (JSONValue) throws -> Void
    ) throws {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard try parser.walk(path[...], body) else {
            throw WireError.malformedPayload("no array at \(path.joined(separator: "."))")
        }
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.invalid("unexpected data after the JSON value") }
    }

    /// Follows `path` through objects; whether the array was found.
    private mutating func walk(_ path: ArraySlice<String>, _ body: (JSONValue) throws -> Void) throws -> Bool {
        guard index < bytes.count else { throw invalid("unexpected end") }
        guard let key = path.first else {
            guard bytes[index] == UInt8(ascii: "[") else { _ = try parseValue(); return false }
            try nest()
            defer { depth -= 1 }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return true }
            while true {
                skipWhitespace()
                try body(try parseValue())
                skipWhitespace()
                guard index < bytes.count else { throw invalid("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return true }
                throw invalid("expected ',' or ']'")
            }
        }
        guard bytes[index] == UInt8(ascii: "{") else { _ = try parseValue(); return false }
        try nest()
        defer { depth -= 1 }
        index += 1
        var found = false
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return false }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw invalid("expected a member name") }
            let name = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw invalid("expected ':'") }
            index += 1
            skipWhitespace()
            if name == key && !found {
                found = try walk(path.dropFirst(), body)
            } else {
                _ = try parseValue()
            }
            skipWhitespace()
            guard index < bytes.count else { throw invalid("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return found }
            throw invalid("expected ',' or '}'")
        }
    }

    private func invalid(_ reason: String) -> WireError {
        .malformedPayload("not valid JSON (\(reason) at byte \(index))")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(WireError) -> JSONValue {
        guard index < bytes.count else { throw invalid("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw invalid("unexpected character")
        }
    }

    private mutating func expect(_ literal: StaticString) throws(WireError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count,
              bytes[index..<index + expected.count].elementsEqual(expected) else { throw invalid("unexpected character") }
        index += expected.count
    }

    private mutating func nest() throws(WireError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw invalid("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(WireError) -> JSONValue {
        try nest()
        defer { depth -= 1 }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw invalid("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw invalid("expected ':'") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw invalid("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw invalid("expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws(WireError) -> JSONValue {
        try nest()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw invalid("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw invalid("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(WireError) -> String {
        index += 1
        let start = index
        let hasEscapes = try JSONEscapes.scanString(bytes, at: &index, end: bytes.count)
        let raw = UnsafeBufferPointer(rebasing: bytes[start ..< index - 1])
        guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
        return String(decoding: JSONEscapes.unescape(raw), as: UTF8.self)
    }

    private mutating func parseNumber() throws(WireError) -> Double {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        let integerDigits = index - digitsStart
        guard integerDigits > 0 else { throw invalid("bad number") }
        guard integerDigits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { throw invalid("leading zero in number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let fractionStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > fractionStart else { throw invalid("bad number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > exponentStart else { throw invalid("bad number") }
        }
        if isInteger && integerDigits <= 15 {
            var value = 0
            for offset in digitsStart..<index { value = value * 10 + Int(bytes[offset] - UInt8(ascii: "0")) }
            return Double(bytes[start] == UInt8(ascii: "-") ? -value : value)
        }
        guard let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)),
              value.isFinite else { throw invalid("number out of range") }
        return value
    }
}

extension JSONValue {
    /// The member `key` of an object; nil for other values or a missing key.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    package var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    package var doubleValue: Double? { if case .number(let number) = self { number } else { nil } }
    package var boolValue: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    package var arrayValue: [JSONValue]? { if case .array(let elements) = self { elements } else { nil } }
    package var isObject: Bool { if case .object = self { true } else { false } }

    /// The value as an Int when it is an integral number in range.
    package var intValue: Int? {
        guard case .number(let number) = self, number == number.rounded(), abs(number) <= 9_007_199_254_740_992 else { return nil }
        return Int(number)
    }
}
