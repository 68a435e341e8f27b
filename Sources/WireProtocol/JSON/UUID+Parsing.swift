import Foundation

/// Parses the 8-4-4-4-12 hex form, either case, without `sscanf`.
func parseUUID(_ text: String) -> UUID? {
    var text = text
    text.makeContiguousUTF8()  // free for native strings; bridged ones get copied once
    return text.utf8.withContiguousStorageIfAvailable(parseUUID) ?? nil
}

/// Parses the 8-4-4-4-12 hex form from UTF-8 bytes, allocating nothing.
func parseUUID(_ chars: UnsafeBufferPointer<UInt8>) -> UUID? {
    guard chars.count == 36 else { return nil }
    var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    let parsed = withUnsafeMutableBytes(of: &uuid) { bytes -> Bool in
        var position = 0
        var byteIndex = 0
        while position < 36 {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard chars[position] == UInt8(ascii: "-") else { return false }
                position += 1
                continue
            }
            guard let high = hexValue(chars[position]), let low = hexValue(chars[position + 1]) else { return false }
            bytes[byteIndex] = high << 4 | low
            byteIndex += 1
            position += 2
        }
        return true
    }
    return parsed ? UUID(uuid: uuid) : nil
}

private func hexValue(_ char: UInt8) -> UInt8? {
    switch char {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
    default: nil
    }
}
