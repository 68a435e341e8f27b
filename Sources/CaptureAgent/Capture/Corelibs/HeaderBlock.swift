import WireProtocol

/// An HTTP/1 header block as libcurl wrote or read it: a start line (the
/// request line, or the status line), then `Name: value` lines, each ended
/// by CRLF, then an empty line.
///
/// Parsed from the block's UTF-8 bytes in one pass: going through
/// `String`'s views (`split`, `Character`s, `trimmingCharacters`) segments
/// graphemes and bridges through `NSString` for every line, on every flow
/// (docs/BENCHMARKS.md, "Costs behind the code").
struct HeaderBlock {
    /// The first non-empty line.
    private(set) var startLine = ""
    /// The fields in order, names and values trimmed of spaces and tabs;
    /// lines without a colon or with an empty name are left out.
    private(set) var fields: [HTTPHeader] = []

    init(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != 0x0A, bytes[lineEnd] != 0x0D { lineEnd += 1 }
                if lineEnd > lineStart {
                    let line = UnsafeBufferPointer(rebasing: bytes[lineStart ..< lineEnd])
                    if startLine.isEmpty {
                        startLine = String(decoding: line, as: UTF8.self)
                    } else if let field = Self.field(in: line) {
                        fields.append(field)
                    }
                }
                lineStart = lineEnd + 1
            }
        }
    }

    /// The status code of a response head (`HTTP/1.1 301 Moved`), or nil.
    var status: Int? {
        let parts = startLine.utf8.split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard parts.count > 1, parts[0].starts(with: "HTTP/".utf8) else { return nil }
        return Int(String(decoding: parts[1], as: UTF8.self))
    }

    /// The value of the first field named `name` (compared case-insensitively).
    func value(of name: String) -> String? {
        fields.first { HTTPHeader.namesMatch($0.name, name) }?.value
    }

    private static func field(in line: UnsafeBufferPointer<UInt8>) -> HTTPHeader? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = trimmed(line, 0 ..< colon)
        guard !name.isEmpty else { return nil }
        let value = trimmed(line, colon + 1 ..< line.count)
        return HTTPHeader(
            name: String(decoding: UnsafeBufferPointer(rebasing: line[name]), as: UTF8.self),
            value: String(decoding: UnsafeBufferPointer(rebasing: line[value]), as: UTF8.self))
    }

    /// `range` of `line` without leading and trailing spaces and tabs.
    private static func trimmed(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, line[lower] == 0x20 || line[lower] == 0x09 { lower += 1 }
        while upper > lower, line[upper - 1] == 0x20 || line[upper - 1] == 0x09 { upper -= 1 }
        return lower ..< upper
    }
}
