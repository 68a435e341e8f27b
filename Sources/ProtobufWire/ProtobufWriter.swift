/// Writes the protobuf wire format field by field, without a schema: the
/// counterpart of ``ProtobufReader`` for small replies and test messages.
///
/// ```swift
/// var status = ProtobufWriter()
/// status.writeVarint(3, field: 1)
/// status.writeString("bad span", field: 2)
/// let bytes = status.bytes
/// ```
package struct ProtobufWriter: Sendable {
    /// The message written so far.
    package private(set) var bytes: [UInt8] = []

    /// An empty message.
    package init() {}

    /// Writes a varint field (int32/64, uint32/64, bool, enum).
    package mutating func writeVarint(_ value: UInt64, field: Int) {
        writeTag(field, .varint)
        appendVarint(value)
    }

    /// Writes an eight-byte little-endian field (fixed64, double's bit pattern).
    package mutating func writeFixed64(_ value: UInt64, field: Int) {
        writeTag(field, .fixed64)
        for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    /// Writes a length-delimited field holding these bytes.
    package mutating func writeBytes(_ value: some Collection<UInt8>, field: Int) {
        writeTag(field, .lengthDelimited)
        appendVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Writes a length-delimited field holding UTF-8 text.
    package mutating func writeString(_ value: String, field: Int) {
        writeBytes(value.utf8, field: field)
    }

    /// Writes an embedded message.
    package mutating func writeMessage(_ message: ProtobufWriter, field: Int) {
        writeBytes(message.bytes, field: field)
    }

    private mutating func writeTag(_ field: Int, _ wireType: ProtobufReader.WireType) {
        appendVarint(UInt64(field) << 3 | UInt64(wireType.rawValue))
    }

    private mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
