/// A protobuf message decoded for a person to read: every field in wire
/// order, named and typed when a ``ProtoSchema`` knows the message type,
/// else read raw with guesses (a length-delimited value that is printable
/// text is a string, else a nested message when it parses as one, else bytes).
///
/// ```swift
/// let message = try DecodedMessage(bytes: [0x08, 0x96, 0x01])
/// message.fields[0].value   // .varint(150)
/// ```
package struct DecodedMessage: Sendable, Equatable {
    /// The message type, when the schema gave one.
    package var typeName: String?
    /// The fields in the order they were written (repeated fields once per value).
    package var fields: [DecodedField]

    /// Decodes `bytes` as the message type `typeName` of `schema`, or raw
    /// when either is nil or the schema does not have that type.
    /// - Throws: ``ProtobufError`` when the outermost message is not well-formed
    ///   protobuf (nested values that do not parse are kept as bytes instead).
    package init(bytes: [UInt8], typeName: String? = nil, schema: ProtoSchema? = nil) throws(ProtobufError) {
        var reader = ProtobufReader(bytes)
        let type = typeName.flatMap { schema?.messages[$0] }
        self = try Self.decode(&reader, type: type, schema: schema)
    }

    init(typeName: String?, fields: [DecodedField]) {
        self.typeName = typeName
        self.fields = fields
    }

    /// Reads fields up to the end of the message, or for a group up to its
    /// end tag (the group was checked whole with `skip` before, so its end
    /// is there and its nesting within the depth limit).
    private static func decode(_ reader: inout ProtobufReader, type: ProtoSchema.Message?, schema: ProtoSchema?,
                               isGroup: Bool = false) throws(ProtobufError) -> DecodedMessage {
        var fields: [DecodedField] = []
        while let tag = try reader.nextField() {
            let declared = type?.fields[tag.number]
            let value: DecodedValue
            switch tag.wireType {
            case .varint: value = .varint(try reader.readVarint())
            case .fixed64: value = .fixed64(try reader.readFixed64())
            case .fixed32: value = .fixed32(try reader.readFixed32())
            case .lengthDelimited: value = try lengthDelimited(&reader, declared: declared, schema: schema)
            case .startGroup:
                var probe = reader
                try probe.skip(.startGroup)
                let groupType = declared?.typeName.flatMap { schema?.messages[$0] }
                value = .group(try decode(&reader, type: groupType, schema: schema, isGroup: true))
            case .endGroup:
                guard isGroup else { try reader.skip(.endGroup); continue }
                return DecodedMessage(typeName: type?.name, fields: fields)
            }
            fields.append(DecodedField(number: tag.number, wireType: tag.wireType, declared: declared, value: value))
        }
        return DecodedMessage(typeName: type?.name, fields: fields)
    }

    private static func lengthDelimited(_ reader: inout ProtobufReader, declared: ProtoSchema.Field?, schema: ProtoSchema?) throws(ProtobufError) -> DecodedValue {
        var probe = reader
        let bytes = try reader.readBytes()
        switch declared?.type {
        case .string?:
            if let text = String(validating: bytes, as: UTF8.self) { return .string(text) }
            return .bytes(Array(bytes))
        case .bytes?:
            return .bytes(Array(bytes))
        case .message?:
            guard reader.depth < reader.maximumDepth, var nested = try? probe.readMessage(),
                  let message = try? decode(&nested, type: declared?.typeName.flatMap { schema?.messages[$0] }, schema: schema)
            else { return .bytes(Array(bytes)) }
            return .message(message)
        case .group?, .none:
            return guess(bytes, probe: &probe, schema: schema)
        case let type?:
            // A repeated scalar written packed: a run of values of its wire type.
            return packed(bytes, width: type.packedWidth) ?? .bytes(Array(bytes))
        }
    }

    /// Text when it reads as text, else a message when it parses whole as
    /// one, else bytes.
    private static func guess(_ bytes: ArraySlice<UInt8>, probe: inout ProtobufReader, schema: ProtoSchema?) -> DecodedValue {
        if let text = String(validating: bytes, as: UTF8.self), text.unicodeScalars.allSatisfy(isPrintable) {
            return .string(text)
        }
        if probe.depth < probe.maximumDepth, var nested = try? probe.readMessage(),
           let message = try? decode(&nested, type: nil, schema: schema), !message.fields.isEmpty {
            return .message(message)
        }
        return .bytes(Array(bytes))
    }

    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\n" || scalar == "\t" || scalar == "\r" || (scalar.value >= 0x20 && scalar.value != 0x7F && !(0x80..<0xA0).contains(scalar.value))
    }

    /// `width`: 4 or 8 for fixed-size values, nil for varints.
    private static func packed(_ bytes: ArraySlice<UInt8>, width: Int?) -> DecodedValue? {
        var reader = ProtobufReader(Array(bytes))
        var values: [DecodedValue] = []
        while !reader.isAtEnd {
            switch width {
            case 4?: guard let value = try? reader.readFixed32() else { return nil }; values.append(.fixed32(value))
            case 8?: guard let value = try? reader.readFixed64() else { return nil }; values.append(.fixed64(value))
            default: guard let value = try? reader.readVarint() else { return nil }; values.append(.varint(value))
            }
        }
        return .packed(values)
    }
}

extension ProtoSchema.FieldType {
    /// The size of one value on the wire when it is fixed (4 or 8), nil for varints.
    var packedWidth: Int? {
        switch self {
        case .float, .fixed32, .sfixed32: 4
        case .double, .fixed64, .sfixed64: 8
        default: nil
        }
    }
}

/// One field of a ``DecodedMessage``.
package struct DecodedField: Sendable, Equatable {
    /// The field number.
    package var number: Int
    /// How the value was encoded.
    package var wireType: ProtobufReader.WireType
    /// The schema's field of that number, when there is one.
    package var declared: ProtoSchema.Field?
    /// The value.
    package var value: DecodedValue
}

/// A field's value as read off the wire.
package indirect enum DecodedValue: Sendable, Equatable {
    /// A varint: an int, uint, sint (zigzag), bool or enum, as the schema says.
    case varint(UInt64)
    /// Four little-endian bytes: fixed32, sfixed32 or float.
    case fixed32(UInt32)
    /// Eight little-endian bytes: fixed64, sfixed64 or double.
    case fixed64(UInt64)
    /// A length-delimited value read as UTF-8 text.
    case string(String)
    /// A length-delimited value shown as bytes.
    case bytes([UInt8])
    /// An embedded message.
    case message(DecodedMessage)
    /// A group (the deprecated proto2 form of an embedded message).
    case group(DecodedMessage)
    /// A packed repeated scalar field's values (each a varint, fixed32 or fixed64).
    case packed([DecodedValue])
}
