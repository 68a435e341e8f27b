/// Numbers, read straight from a payload's bytes: integers of up to 15
/// digits as integers, other numbers by Clinger's fast path when their
/// digits fit a Double exactly, by `strtod` when not.
extension JSONDocument {
    /// A number entry with ``JSONTape/isSmallInteger``'s value: at most 15
    /// digits and a sign, so it fits an Int exactly.
    func smallInteger(of entry: JSONTape.Entry) -> Int {
        var index = Int(entry.start)
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value = 0
        while index < Int(entry.end) {
            value = value &* 10 &+ Int(bytes[index] &- UInt8(ascii: "0"))
            index += 1
        }
        return negative ? -value : value
    }

    /// A number entry's value.
    func double(of entry: JSONTape.Entry) -> Double {
        guard entry.flags & JSONTape.isSmallInteger == 0 else { return Double(smallInteger(of: entry)) }
        // Clinger's fast path: a decimal whose digits fit 2^53 and whose
        // scale is at most 22 places either way is one exact integer
        // divided or multiplied by one exact power of ten, so the one
        // operation rounds correctly. Exponents count (`2.5e-05`:
        // `description` writes those below 1e-4, and a loopback flow's
        // phases are often that short). The tape has checked the syntax:
        // digits, then maybe a point and digits, then maybe an exponent.
        let start = Int(entry.start), end = Int(entry.end)
        let negative = bytes[start] == UInt8(ascii: "-")
        var index = negative ? start + 1 : start
        var mantissa: UInt64 = 0
        guard let integerDigits = digits(from: index, to: end, into: &mantissa) else { return slowDouble(entry) }
        index += integerDigits
        var fractionDigits = 0
        if index < end, bytes[index] == UInt8(ascii: ".") {
            guard let count = digits(from: index + 1, to: end, into: &mantissa) else { return slowDouble(entry) }
            fractionDigits = count
            index += 1 + count
        }
        var exponent = 0
        if index < end {  // the exponent's `e` or `E`
            guard let parsed = Self.exponent(text(of: entry), from: index + 1 - start) else { return slowDouble(entry) }
            exponent = parsed
        }
        let scale = fractionDigits - exponent
        guard scale > -Self.powersOfTen.count, scale < Self.powersOfTen.count else { return slowDouble(entry) }
        let value = Self.powersOfTen.withUnsafeBufferPointer { powers in
            scale >= 0 ? Double(mantissa) / powers[scale] : Double(mantissa) * powers[-scale]
        }
        return negative ? -value : value
    }

    /// Adds the decimal digits from `start` up to the first other byte (or
    /// `end`) to `mantissa`; how many there were, or nil once the mantissa
    /// would reach 2^53. Eight at a time where eight bytes can be loaded:
    /// one by one, each digit is a load, a compare and a multiply
    /// (docs/BENCHMARKS.md, "Costs behind the code").
    @inline(__always)
    private func digits(from start: Int, to end: Int, into mantissa: inout UInt64) -> Int? {
        var index = start
        while index < end {
            if bytes.count - index >= 8, let base = bytes.baseAddress {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                let (count, value) = Self.leadingDigits(of: word, atMost: end - index)
                guard count > 0 else { break }
                guard let grown = Self.appending(value, count: count, to: mantissa) else { return nil }
                mantissa = grown
                index += count
                if count < 8 { break }  // the word held the digits' end
            } else {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                guard let grown = Self.appending(UInt64(digit), count: 1, to: mantissa) else { return nil }
                mantissa = grown
                index += 1
            }
        }
        return index - start
    }

    /// How many of a little-endian word's bytes, up to `limit`, are ASCII
    /// digits before the first that is not, and their value.
    @inline(__always)
    static func leadingDigits(of word: UInt64, atMost limit: Int) -> (count: Int, value: UInt64) {
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Each byte's digit value; a byte below "0" borrows from the bytes
        // after it, which are past the first that is no digit anyway.
        let values = word &- ones &* 0x30
        // A byte's high bit is set here when it is no digit: its value is
        // 0x80 or more, or 10 or more (which 0x76 carries past 0x7F).
        let nonDigits = (values | (values &+ ones &* 0x76)) & (ones &* 0x80)
        let count = min(nonDigits.trailingZeroBitCount / 8, limit)
        guard count > 0 else { return (0, 0) }
        // The digits to the top of the word, zeros below them, then pairs,
        // fours and eights combined (the first digit is the lowest byte).
        var lanes = values << UInt64(64 - 8 * count)
        lanes = ((lanes & (ones &* 0x0F)) &* 2561) >> 8
        lanes = ((lanes & 0x00FF_00FF_00FF_00FF) &* 6_553_601) >> 16
        return (count, ((lanes & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) >> 32)
    }

    /// The exponent from `start` (just after the `e`, as the tape accepted
    /// it) to the number's end; nil beyond three digits.
    private static func exponent(_ raw: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let sign = raw[start]
        let signed = sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+")
        guard let value = JSONTape.exponentValue(raw[(signed ? start + 1 : start)...]) else { return nil }
        return sign == UInt8(ascii: "-") ? -value : value
    }

    private func slowDouble(_ entry: JSONTape.Entry) -> Double {
        Double(String(decoding: text(of: entry), as: UTF8.self)) ?? .nan
    }

    /// `mantissa` followed by `count` (1 through 8) more digits worth
    /// `value`; nil at 2^53 or beyond, where a Double stops being exact.
    /// (A switch, not a table: a static table is a `swift_once` call each read.)
    @inline(__always)
    private static func appending(_ value: UInt64, count: Int, to mantissa: UInt64) -> UInt64? {
        let scale: UInt64
        switch count {
        case 1: scale = 10
        case 2: scale = 100
        case 3: scale = 1_000
        case 4: scale = 10_000
        case 5: scale = 100_000
        case 6: scale = 1_000_000
        case 7: scale = 10_000_000
        default: scale = 100_000_000
        }
        let (shifted, overflow) = mantissa.multipliedReportingOverflow(by: scale)
        let total = shifted &+ value
        return !overflow && shifted < 1 << 53 && total < 1 << 53 ? total : nil
    }

    /// 10^0 through 10^22, each exact as a Double.
    private static let powersOfTen: [Double] = (0 ... 22).map { exponent in
        (0 ..< exponent).reduce(1.0) { value, _ in value * 10 }
    }
}
