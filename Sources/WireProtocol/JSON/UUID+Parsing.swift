import Foundation

/// Parses the 8-4-4-4-12 hex form, either case, without `sscanf`.
func parseUUID(_ text: String) -> UUID? {
    var text = text
    text.makeContiguousUTF8()  // free for native strings; bridged ones get copied once
    return text.utf8.withContiguousStorageIfAvailable(parseUUID) ?? nil
}

/// Parses the 8-4-4-4-12 hex form from UTF-8 bytes, allocating nothing:
/// sixteen pairs of digits at fixed offsets, each digit looked up in one
/// table (a branch per character cost far more; docs/BENCHMARKS.md, "Costs behind the code").
func parseUUID(_ chars: UnsafeBufferPointer<UInt8>) -> UUID? {
    guard chars.count == 36, let text = chars.baseAddress else { return nil }
    let dash = UInt8(ascii: "-")
    guard text[8] == dash, text[13] == dash, text[18] == dash, text[23] == dash else { return nil }
    var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    let parsed = withUnsafeMutableBytes(of: &uuid) { bytes in
        HexDigits.values.withUnsafeBufferPointer { values in
            var invalid: UInt8 = 0
            for (index, offset) in HexDigits.pairOffsets.enumerated() {
                let high = values[Int(text[offset])], low = values[Int(text[offset + 1])]
                invalid |= high | low
                bytes[index] = high << 4 | (low & 0x0F)
            }
            return invalid & 0xF0 == 0
        }
    }
    return parsed ? UUID(uuid: uuid) : nil
}

private enum HexDigits {
    /// Each byte's value as a hex digit, or 0xFF.
    static let values: [UInt8] = (0 ... 255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }
    /// Where each of a UUID's sixteen bytes is written in the 8-4-4-4-12 form.
    static let pairOffsets = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]
}
