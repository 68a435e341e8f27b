import Foundation

/// Writes JSON straight into a byte buffer: the encoding half of the wire
/// path's fast JSON (see ``JSONValue`` for why it exists).
struct JSONWriter: ~Copyable {
    /// What was written.
    var output: WriteBuffer
    private var needsComma = false
    /// While writing a version-2 payload: the bodies to put after the JSON
    /// (``SectionedPayload``); nil while writing plain JSON.
    var sections: [Data]?

    init(capacity: Int = 512) { output = WriteBuffer(capacity: capacity) }

    /// What was written, as an array.
    var bytes: [UInt8] { output.array }

    mutating func object(_ body: (inout JSONWriter) -> Void) {
        let outer = needsComma
        needsComma = false
        output.append(UInt8(ascii: "{"))
        body(&self)
        output.append(UInt8(ascii: "}"))
        needsComma = outer
    }

    /// Decimal digits, without going through a String: counted first, then
    /// written in place, two at a time.
    mutating func integer(_ value: Int) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        digits(UInt64(value.magnitude))
    }

    /// `value`'s decimal digits, written straight into the buffer.
    @inline(__always)
    private mutating func digits(_ value: UInt64) {
        var count = 1, bound: UInt64 = 10
        while count < 20, value >= bound {
            count += 1
            bound &*= 10
        }
        digits(value, count: count)
    }

    /// The last `count` decimal digits of `value`, zeros in front when it has fewer.
    @inline(__always)
    private mutating func digits(_ value: UInt64, count: Int) {
        let out = output.appendUninitialized(count)
        let pairs = Self.digitPairs.utf8Start
        var rest = value, position = count
        while position >= 2 {
            let pair = Int(rest % 100) &* 2
            rest /= 100
            position -= 2
            out[position] = pairs[pair]
            out[position + 1] = pairs[pair + 1]
        }
        if position == 1 { out[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10) }
    }

    /// "00" to "99", two digits at a time.
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    mutating func literal(_ text: StaticString) {
        output.append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `"name":`, after a comma unless first in its object: one reservation
    /// and one copy (a payload has dozens of keys).
    mutating func key(_ name: StaticString) {
        let count = name.utf8CodeUnitCount
        let comma = needsComma ? 1 : 0
        needsComma = true
        let out = output.appendUninitialized(comma + count + 3)
        if comma == 1 { out[0] = UInt8(ascii: ",") }
        out[comma] = UInt8(ascii: "\"")
        (out + comma + 1).update(from: name.utf8Start, count: count)
        out[comma + count + 1] = UInt8(ascii: "\"")
        out[comma + count + 2] = UInt8(ascii: ":")
    }

    mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }
    mutating func field(_ name: StaticString, _ value: Int) { key(name); integer(value) }
    mutating func field(_ name: StaticString, _ value: Double) { key(name); number(value) }
    mutating func field(_ name: StaticString, _ value: Bool) { key(name); literal(value ? "true" : "false") }
    mutating func field(_ name: StaticString, base64 value: Data) { key(name); base64(value) }
    mutating func field(_ name: StaticString, _ value: some JSONWritable) { key(name); value.write(to: &self) }

    mutating func field(_ name: StaticString, _ value: String?) { if let value { field(name, value) } }
    mutating func field(_ name: StaticString, _ value: Double?) { if let value { field(name, value) } }
    mutating func field(_ name: StaticString, _ value: Int?) { if let value { field(name, value) } }
    mutating func field(_ name: StaticString, _ value: (some JSONWritable)?) { if let value { field(name, value) } }

    mutating func field(_ name: StaticString, _ values: [some JSONWritable]) {
        key(name)
        output.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            value.write(to: &self)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Shortest text that reads back as the same Double; non-finite values,
    /// which JSON cannot carry, are written as 0.
    mutating func number(_ value: Double) {
        guard value.isFinite else { output.append(UInt8(ascii: "0")); return }
        if value == value.rounded(), abs(value) < 1e15 {
            integer(Int(value))
        } else if !fixedPoint(value) {
            var text = value.description
            text.withUTF8 { output.append($0) }
        }
    }

    /// Writes `value` as digits and a point when at most 9 decimals (below
    /// 1e6) or 6 (below 4e9) read back as exactly `value`; false, writing
    /// nothing, otherwise. What a flow's timing holds (offsets in
    /// nanoseconds, a start in microseconds) always fits, and the digits
    /// are `description`'s: below those bounds a Double's spacing is under
    /// half the last decimal's step, so only one such decimal reads back as
    /// `value`, and the shortest text that does is that one. Below 1e-4,
    /// where `description` writes an exponent (`2.5e-05`), this writes the
    /// same digits after the point's zeros (`0.000025`), which readers
    /// parse without one. `description` makes a String for every number,
    /// and a reader's exponent costs as much again (docs/BENCHMARKS.md, "Costs behind the code").
    private mutating func fixedPoint(_ value: Double) -> Bool {
        let magnitude = abs(value)
        let decimals: Int, scale: Double
        if magnitude < 1e6 {
            (decimals, scale) = (9, 1e9)
        } else if magnitude < 4e9 {
            (decimals, scale) = (6, 1e6)
        } else {
            return false
        }
        let scaled = (magnitude * scale).rounded()
        // Both exact (scaled < 2^53), so the quotient is the Double a reader
        // makes of that decimal.
        guard scaled / scale == magnitude else { return false }
        var units = UInt64(scaled), places = decimals
        while places > 0, units % 10 == 0 {
            units /= 10
            places -= 1
        }
        var divisor: UInt64 = 1
        for _ in 0 ..< places { divisor &*= 10 }
        if value < 0 { output.append(UInt8(ascii: "-")) }
        digits(units / divisor)
        output.append(UInt8(ascii: "."))
        digits(units % divisor, count: places)
        return true
    }

    /// `data` as a base64 string (standard alphabet, padded), encoded
    /// straight into the buffer: no `String`, no escape scan (the alphabet
    /// needs none), and no intermediate `Data`. Foundation's
    /// `base64EncodedData()` cost several times as much on Linux; this takes
    /// six bytes a step, four table lookups of two characters and one
    /// eight-byte store (docs/BENCHMARKS.md, "Costs behind the code").
    mutating func base64(_ data: Data) {
        let alphabet = Self.base64Alphabet.utf8Start
        output.append(UInt8(ascii: "\""))
        let text = output.appendUninitialized((data.count + 2) / 3 * 4)
        data.withUnsafeBytes { input in
            var read = 0, write = 0
            Self.base64Pairs.withUnsafeBufferPointer { pairs in
                guard let bytes = input.baseAddress?.assumingMemoryBound(to: UInt8.self), let pairs = pairs.baseAddress else { return }
                let raw = UnsafeMutableRawPointer(text), whole = input.count - input.count % 3
                // Six bytes at a time while eight can be loaded: four lookups, one store.
                while whole - read >= 8 {
                    let word = UInt64(bigEndian: UnsafeRawPointer(bytes + read).loadUnaligned(as: UInt64.self))
                    let eight = UInt64(pairs[Int(truncatingIfNeeded: word >> 52)])
                        | UInt64(pairs[Int(truncatingIfNeeded: word >> 40 & 0xFFF)]) << 16
                        | UInt64(pairs[Int(truncatingIfNeeded: word >> 28 & 0xFFF)]) << 32
                        | UInt64(pairs[Int(truncatingIfNeeded: word >> 16 & 0xFFF)]) << 48
                    raw.storeBytes(of: eight.littleEndian, toByteOffset: write, as: UInt64.self)
                    read &+= 6
                    write &+= 8
                }
                while read < whole {
                    let group = Int(bytes[read]) << 16 | Int(bytes[read + 1]) << 8 | Int(bytes[read + 2])
                    let four = UInt32(pairs[group >> 12]) | UInt32(pairs[group & 0xFFF]) << 16
                    raw.storeBytes(of: four.littleEndian, toByteOffset: write, as: UInt32.self)
                    read &+= 3
                    write &+= 4
                }
            }
            guard read < input.count else { return }
            let second = read + 1 < input.count ? UInt32(input[read + 1]) : 0
            let group = UInt32(input[read]) << 16 | second << 8
            text[write] = alphabet[Int(group >> 18)]
            text[write + 1] = alphabet[Int(group >> 12 & 63)]
            text[write + 2] = read + 1 < input.count ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "=")
            text[write + 3] = UInt8(ascii: "=")
        }
        output.append(UInt8(ascii: "\""))
    }

    private static let base64Alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// The two base64 characters of every 12-bit value, the first in the
    /// low byte (8 KiB, made once).
    private static let base64Pairs: [UInt16] = (0 ..< 4096).map { value in
        let alphabet = base64Alphabet.utf8Start
        return UInt16(alphabet[value >> 6]) | UInt16(alphabet[value & 63]) << 8
    }

    /// A UUID in its canonical upper-case form, without `printf`.
    mutating func uuid(_ uuid: UUID) {
        let hex = ("0123456789ABCDEF" as StaticString).utf8Start
        output.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { output.append(UInt8(ascii: "-")) }
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    mutating func string(_ value: String) {
        output.append(UInt8(ascii: "\""))
        var utf8 = value.utf8
        // Most strings need no escaping: copy their bytes in one go, from the
        // buffer just scanned (appending the UTF8View went element-wise
        // through a generic path; docs/BENCHMARKS.md, "Costs behind the code").
        let plain = utf8.withContiguousStorageIfAvailable { buffer in
            guard !buffer.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            output.append(buffer)
            return true
        }
        if plain != true {
            if plain == nil {
                var copy = value
                copy.makeContiguousUTF8()
                utf8 = copy.utf8
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                              hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
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

