import Foundation

/// Parses the 8-4-4-4-12 hex form, either case, without `sscanf`.
func parseUUID(_ text: String) -> UUID? {
    var text = text
    text.makeContiguousUTF8()  // free for native strings; bridged ones get copied once
    guard text.utf8.count == 36 else { return nil }
    let parsed = text.utf8.withContiguousStorageIfAvailable { chars -> UUID? in
        var bytes = [UInt8](repeating: 0, count: 16)
        var position = 0
        var byteIndex = 0
        while position < 36 {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard chars[position] == UInt8(ascii: "-") else { return nil }
                position += 1
                continue
            }
            guard let high = hexValue(chars[position]), let low = hexValue(chars[position + 1]) else { return nil }
            bytes[byteIndex] = high << 4 | low
            byteIndex += 1
            position += 2
        }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
    return parsed ?? nil
}

private func hexValue(_ char: UInt8) -> UInt8? {
    switch char {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
    default: nil
    }
}
