/// Reads the protobuf wire format field by field, without a schema: varints,
/// fixed 32- and 64-bit values and length-delimited bytes, each checked
/// against the end of its message before anything is read or allocated.
///
/// A reader for a nested message shares the caller's bytes (no copy) and
/// counts one level deeper; past ``maximumDepth`` it throws, so hostile input
/// nested a million levels deep costs a bounded stack. Unknown fields are
/// skipped with ``skip(_:)``, groups included.
///
/// ```swift
/// var reader = ProtobufReader(bytes)
/// while let field = try reader.nextField() {
///     switch (field.number, field.wireType) {
///     case (1, .lengthDelimited): name = try reader.readString()
///     case (2, .varint): count = try reader.readVarint()
///     default: try reader.skip(field.wireType)
///     }
/// }
/// ```
package struct ProtobufReader: Sendable {
    /// How a field's value is laid out on the wire (the low three bits of its tag).
    package enum WireType: UInt8, Sendable {
        /// A base-128 varint: int32/64, uint32/64, sint32/64, bool, enum.
        case varint = 0
        /// Eight little-endian bytes: fixed64, sfixed64, double.
        case fixed64 = 1
        /// A varint length, then that many bytes: string, bytes, messages, packed repeats.
        case lengthDelimited = 2
        /// The start of a (deprecated) group, ended by a matching ``endGroup``.
        case startGroup = 3
        /// The end of a group.
        case endGroup = 4
        /// Four little-endian bytes: fixed32, sfixed32, float.
        case fixed32 = 5
    }

    /// A field's tag: its number in the schema and how its value is encoded.
    package struct Field: Sendable, Equatable {
        /// The field number, 1 to 2^29 - 1.
        package var number: Int
        /// How the value that follows is encoded.
        package var wireType: WireType

        /// A tag; for matching, as in `field == .init(number: 1, wireType: .varint)`.
        package init(number: Int, wireType: WireType) {
            self.number = number
            self.wireType = wireType
        }
    }

    /// How deep nested messages may go by default; real schemas (OTLP's
    /// deepest path is about eight) stay far below it.
    package static let defaultMaximumDepth = 32

    private let bytes: [UInt8]
    private var position: Int
    private let end: Int
    /// How many messages enclose this one (0 for the outermost).
    package let depth: Int
    /// The deepest ``depth`` a nested reader may have.
    package let maximumDepth: Int

    /// A reader for one whole message.
    package init(_ bytes: [UInt8], maximumDepth: Int = ProtobufReader.defaultMaximumDepth) {
        self.init(bytes, range: 0..<bytes.count, depth: 0, maximumDepth: maximumDepth)
    }

    private init(_ bytes: [UInt8], range: Range<Int>, depth: Int, maximumDepth: Int) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
        self.depth = depth
        self.maximumDepth = maximumDepth
    }

    /// Whether every byte of the message has been read.
    package var isAtEnd: Bool { position >= end }

    /// Reads the next field's tag; nil at the end of the message.
    package mutating func nextField() throws(ProtobufError) -> Field? {
        guard !isAtEnd else { return nil }
        let tag = try readVarint()
        let number = tag >> 3
        guard number >= 1, number < 1 << 29 else { throw .invalidFieldNumber(offset: position) }
        guard let wireType = WireType(rawValue: UInt8(tag & 7)) else {
            throw .invalidWireType(UInt8(tag & 7), offset: position)
        }
        return Field(number: Int(number), wireType: wireType)
    }

    /// Reads a base-128 varint of at most ten bytes.
    package mutating func readVarint() throws(ProtobufError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw .truncated(offset: position) }
            let byte = bytes[position]
            position += 1
            // The tenth byte may only carry the 64th bit.
            guard shift < 63 || byte <= 1 else { throw .malformedVarint(offset: position - 1) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// Reads eight little-endian bytes.
    package mutating func readFixed64() throws(ProtobufError) -> UInt64 {
        try readLittleEndian(count: 8)
    }

    /// Reads four little-endian bytes.
    package mutating func readFixed32() throws(ProtobufError) -> UInt32 {
        UInt32(try readLittleEndian(count: 4))
    }

    /// Reads an IEEE 754 double (wire type ``WireType/fixed64``).
    package mutating func readDouble() throws(ProtobufError) -> Double {
        Double(bitPattern: try readFixed64())
    }

    /// Reads a length-delimited value's bytes.
    package mutating func readBytes() throws(ProtobufError) -> ArraySlice<UInt8> {
        bytes[try readLengthDelimitedRange()]
    }

    /// Reads a length-delimited value as UTF-8 text.
    /// - Throws: ``ProtobufError/invalidUTF8(offset:)`` when it is not UTF-8.
    package mutating func readString() throws(ProtobufError) -> String {
        let range = try readLengthDelimitedRange()
        let string = bytes.withUnsafeBufferPointer { all -> String? in
            let text = UnsafeBufferPointer(rebasing: all[range])
            // ASCII, nearly every OTLP key and value, is valid as it is:
            // decoding it skips the generic validator's metadata lookups
            // (docs/BENCHMARKS.md, "Costs behind the code").
            if text.allSatisfy({ $0 < 0x80 }) { return String(decoding: text, as: UTF8.self) }
            return String(validating: text, as: UTF8.self)
        }
        guard let string else { throw .invalidUTF8(offset: range.lowerBound) }
        return string
    }

    /// A reader for the embedded message that is the current field's value.
    /// - Throws: ``ProtobufError/tooDeep(maximum:)`` past ``maximumDepth``.
    package mutating func readMessage() throws(ProtobufError) -> ProtobufReader {
        guard depth < maximumDepth else { throw .tooDeep(maximum: maximumDepth) }
        let range = try readLengthDelimitedRange()
        return ProtobufReader(bytes, range: range, depth: depth + 1, maximumDepth: maximumDepth)
    }

    /// Skips the value of a field of this wire type, a whole group included.
    package mutating func skip(_ wireType: WireType) throws(ProtobufError) {
        switch wireType {
        case .varint: _ = try readVarint()
        case .fixed64: _ = try readFixed64()
        case .fixed32: _ = try readFixed32()
        case .lengthDelimited: _ = try readLengthDelimitedRange()
        case .startGroup: try skipGroup()
        case .endGroup: throw .unexpectedEndGroup(offset: position)
        }
    }

    private mutating func skipGroup() throws(ProtobufError) {
        // Groups nest like messages, so they count against the same depth.
        var open = 1
        while open > 0 {
            guard open + depth <= maximumDepth else { throw .tooDeep(maximum: maximumDepth) }
            guard let field = try nextField() else { throw .truncated(offset: position) }
            switch field.wireType {
            case .startGroup: open += 1
            case .endGroup: open -= 1
            default: try skip(field.wireType)
            }
        }
    }

    private mutating func readLengthDelimitedRange() throws(ProtobufError) -> Range<Int> {
        let start = position
        let length = try readVarint()
        // Compared before any arithmetic: a declared length of 2^63 must not overflow.
        guard length <= UInt64(end - position) else {
            throw .lengthBeyondEnd(declared: length, available: end - position, offset: start)
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    private mutating func readLittleEndian(count: Int) throws(ProtobufError) -> UInt64 {
        guard end - position >= count else { throw .truncated(offset: position) }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += count
        return value
    }
}

/// Why bytes are not a well-formed protobuf message. Offsets count from the
/// start of the outermost message.
package enum ProtobufError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message ends in the middle of a value.
    case truncated(offset: Int)
    /// A varint runs past ten bytes or past 64 bits.
    case malformedVarint(offset: Int)
    /// A tag names field number 0 or one past 2^29 - 1.
    case invalidFieldNumber(offset: Int)
    /// A tag's wire type is 6 or 7.
    case invalidWireType(UInt8, offset: Int)
    /// A length prefix claims more bytes than the message has left.
    case lengthBeyondEnd(declared: UInt64, available: Int, offset: Int)
    /// A string field is not UTF-8.
    case invalidUTF8(offset: Int)
    /// Messages or groups nest deeper than the reader allows.
    case tooDeep(maximum: Int)
    /// An end-group tag with no group open.
    case unexpectedEndGroup(offset: Int)

    package var description: String {
        switch self {
        case .truncated(let offset): "protobuf message ends in the middle of a value at byte \(offset)"
        case .malformedVarint(let offset): "malformed varint at byte \(offset)"
        case .invalidFieldNumber(let offset): "invalid field number before byte \(offset)"
        case let .invalidWireType(type, offset): "invalid wire type \(type) before byte \(offset)"
        case let .lengthBeyondEnd(declared, available, offset):
            "length at byte \(offset) declares \(declared) bytes but only \(available) remain"
        case .invalidUTF8(let offset): "string at byte \(offset) is not UTF-8"
        case .tooDeep(let maximum): "messages nested deeper than \(maximum) levels"
        case .unexpectedEndGroup(let offset): "end-group tag with no open group before byte \(offset)"
        }
    }
}
