/// One line of a decoded message as text, for a viewer to style: the field's
/// label, its value, and what the value is (its type, and other readings of
/// the same bits when no schema says which is meant).
///
/// ```swift
/// try DecodedMessage(bytes: [0x08, 0x05]).lines()
/// // [DecodedLine(depth: 0, label: "1", value: "5", note: "varint · sint -3")]
/// ```
package struct DecodedLine: Sendable, Equatable {
    /// How many messages enclose the field (0 for the outermost message's fields).
    package var depth: Int
    /// `name (number)` with a schema, else the number; empty for a closing brace.
    package var label: String
    /// The value as text: a number, `"quoted text"`, hex bytes, an enum
    /// value's name, `{` opening a message or `}` closing it.
    package var value: String
    /// What the value is: `int32`, `string`, `echo.Inner`, or for a raw varint
    /// `varint · sint -3`.
    package var note: String

    /// A line.
    package init(depth: Int, label: String, value: String, note: String) {
        self.depth = depth
        self.label = label
        self.value = value
        self.note = note
    }
}

extension DecodedMessage {
    /// How many bytes of a bytes value are shown in hex before `…`.
    package static let shownByteCount = 48

    /// The message as lines, nested messages opened with `{` and closed with `}`.
    package func lines(schema: ProtoSchema? = nil, depth: Int = 0) -> [DecodedLine] {
        var lines: [DecodedLine] = []
        for field in fields {
            let label = field.declared.map { "\($0.name) (\(field.number))" } ?? String(field.number)
            switch field.value {
            case .message(let message), .group(let message):
                let kind = if case .group = field.value { "group" } else { "message" }
                lines.append(DecodedLine(depth: depth, label: label, value: "{", note: message.typeName ?? kind))
                lines += message.lines(schema: schema, depth: depth + 1)
                lines.append(DecodedLine(depth: depth, label: "", value: "}", note: ""))
            case .packed(let values):
                let type = field.declared.map { Self.typeDescription($0) } ?? "packed"
                let texts = values.map { Self.scalar($0, declared: field.declared, schema: schema).value }
                lines.append(DecodedLine(depth: depth, label: label, value: "[" + texts.joined(separator: ", ") + "]", note: "packed " + type))
            default:
                let (value, note) = Self.scalar(field.value, declared: field.declared, schema: schema)
                lines.append(DecodedLine(depth: depth, label: label, value: value, note: note))
            }
        }
        return lines
    }

    /// A value as text and what it is, typed by the schema when the wire type
    /// agrees with the declared type, else raw with its other readings.
    static func scalar(_ value: DecodedValue, declared: ProtoSchema.Field?, schema: ProtoSchema?) -> (value: String, note: String) {
        if let declared, let typed = typed(value, declared, schema: schema) {
            return (typed, typeDescription(declared))
        }
        switch value {
        case .varint(let bits):
            var readings = ["varint"]
            if bits > UInt64(Int64.max) { readings.append("int64 \(Int64(bitPattern: bits))") }
            if bits != 0 { readings.append("sint \(zigzag(bits))") }
            return (String(bits), readings.joined(separator: " · "))
        case .fixed32(let bits):
            return (String(bits), "fixed32 · float \(Float(bitPattern: bits)) · int \(Int32(bitPattern: bits))")
        case .fixed64(let bits):
            return (String(bits), "fixed64 · double \(Double(bitPattern: bits)) · int \(Int64(bitPattern: bits))")
        case .string(let text):
            return (quoted(text), "string")
        case .bytes(let bytes):
            return (hex(bytes), "bytes, \(bytes.count)")
        case .message, .group, .packed:
            return ("", "")
        }
    }

    private static func typed(_ value: DecodedValue, _ field: ProtoSchema.Field, schema: ProtoSchema?) -> String? {
        switch (field.type, value) {
        case (.int32, .varint(let bits)): String(Int32(truncatingIfNeeded: bits))
        case (.int64, .varint(let bits)): String(Int64(bitPattern: bits))
        case (.uint32, .varint(let bits)): String(UInt32(truncatingIfNeeded: bits))
        case (.uint64, .varint(let bits)): String(bits)
        case (.sint32, .varint(let bits)), (.sint64, .varint(let bits)): String(zigzag(bits))
        case (.bool, .varint(let bits)): bits == 0 ? "false" : "true"
        case (.enumeration, .varint(let bits)):
            enumName(Int64(Int32(truncatingIfNeeded: bits)), type: field.typeName, schema: schema)
        case (.fixed32, .fixed32(let bits)): String(bits)
        case (.sfixed32, .fixed32(let bits)): String(Int32(bitPattern: bits))
        case (.float, .fixed32(let bits)): String(Float(bitPattern: bits))
        case (.fixed64, .fixed64(let bits)): String(bits)
        case (.sfixed64, .fixed64(let bits)): String(Int64(bitPattern: bits))
        case (.double, .fixed64(let bits)): String(Double(bitPattern: bits))
        case (.string, .string(let text)): quoted(text)
        case (.bytes, .bytes(let bytes)): hex(bytes)
        default: nil
        }
    }

    private static func enumName(_ number: Int64, type: String?, schema: ProtoSchema?) -> String {
        guard let name = type.flatMap({ schema?.enumerations[$0]?.values[number] }) else { return String(number) }
        return "\(name) (\(number))"
    }

    static func typeDescription(_ field: ProtoSchema.Field) -> String {
        let name = switch field.type {
        case .enumeration, .message, .group: field.typeName ?? "\(field.type)"
        default: "\(field.type)"
        }
        return field.isRepeated ? "repeated " + name : name
    }

    /// The zigzag reading of a varint (sint32/sint64): 1 → -1, 2 → 1.
    package static func zigzag(_ bits: UInt64) -> Int64 {
        Int64(bitPattern: bits >> 1) ^ -Int64(bitPattern: bits & 1)
    }

    /// Text in double quotes, with quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        QuotedText.quoted(text) { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value)
                ? "\\u{" + String(scalar.value, radix: 16) + "}" : nil
        }
    }

    /// Bytes as two-digit hex, space-separated, the first ``shownByteCount`` only.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = bytes.prefix(shownByteCount).map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: " ")
        if bytes.count > shownByteCount { text += " …" }
        return text.isEmpty ? "(empty)" : text
    }
}
