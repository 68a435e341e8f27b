import Foundation
import WireProtocol

/// What an image body is, read from its first bytes: the format's own
/// header, not the declared type.
struct ImageInfo: Sendable, Equatable {
    /// `PNG`, `JPEG`, `GIF` or `WebP`.
    var format: String
    /// Pixels across.
    var width: Int
    /// Pixels down.
    var height: Int

    /// Reads the header of a PNG, JPEG, GIF or WebP image; nil for anything
    /// else or a header cut short.
    init?(_ data: Data) {
        let bytes = [UInt8](data.prefix(64 * 1024))
        func be16(_ at: Int) -> Int? { at + 1 < bytes.count ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : nil }
        func le16(_ at: Int) -> Int? { at + 1 < bytes.count ? Int(bytes[at + 1]) << 8 | Int(bytes[at]) : nil }
        func be32(_ at: Int) -> Int? { guard let high = be16(at), let low = be16(at + 2) else { return nil }; return high << 16 | low }
        func le24(_ at: Int) -> Int? { at + 2 < bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 : nil }
        func ascii(_ at: Int, _ text: String) -> Bool { bytes.count >= at + text.utf8.count && bytes[at..<(at + text.utf8.count)].elementsEqual(text.utf8) }

        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), ascii(12, "IHDR"), let width = be32(16), let height = be32(20) {
            self.init(format: "PNG", width: width, height: height)
        } else if ascii(0, "GIF87a") || ascii(0, "GIF89a"), let width = le16(6), let height = le16(8) {
            self.init(format: "GIF", width: width, height: height)
        } else if bytes.starts(with: [0xFF, 0xD8]) {
            // Walk the segments to the first start-of-frame, which holds the size.
            var at = 2
            while at + 3 < bytes.count, bytes[at] == 0xFF {
                let marker = bytes[at + 1]
                if marker == 0xFF { at += 1; continue }
                guard let length = be16(at + 2), length >= 2 else { return nil }
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    guard let height = be16(at + 5), let width = be16(at + 7) else { return nil }
                    self.init(format: "JPEG", width: width, height: height)
                    return
                }
                at += 2 + length
            }
            return nil
        } else if ascii(0, "RIFF"), ascii(8, "WEBP") {
            if ascii(12, "VP8 "), let width = le16(26), let height = le16(28) {
                self.init(format: "WebP", width: width & 0x3FFF, height: height & 0x3FFF)
            } else if ascii(12, "VP8L"), bytes.count > 24 {
                let bits = Int(bytes[21]) | Int(bytes[22]) << 8 | Int(bytes[23]) << 16 | Int(bytes[24]) << 24
                self.init(format: "WebP", width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
            } else if ascii(12, "VP8X"), let width = le24(24), let height = le24(27) {
                self.init(format: "WebP", width: width + 1, height: height + 1)
            } else {
                return nil
            }
        } else {
            return nil
        }
    }

    /// Creates a description.
    init(format: String, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }
}

extension BodyFormatter {
    // MARK: Images

    static func image(_ info: ImageInfo, data: Data, size: Int) -> [StyledLine] {
        [
            StyledLine([Span("Image  ", .heading), Span("\(info.format), \(info.width) × \(info.height) px, \(Format.size(size))")]),
            "",
        ] + hexDump(data.prefix(256)) + (data.count > 256 ? [StyledLine("… \(data.count - 256) more bytes (an image; first 256 shown)", .dim)] : [])
    }

    // MARK: Multipart

    /// `multipart/form-data` (or any multipart) part by part: its headers,
    /// the field name and file name, then the content as text, or its size
    /// and type when it is binary.
    static func multipart(_ data: Data, boundary: String) -> [StyledLine] {
        let delimiter = Data(("--" + boundary).utf8)
        var lines: [StyledLine] = []
        var parts: [Data] = []
        var start = data.range(of: delimiter)?.upperBound
        while let from = start {
            guard let next = data.range(of: delimiter, in: from..<data.endIndex) else { break }
            parts.append(data[from..<next.lowerBound])
            start = next.upperBound
        }
        guard !parts.isEmpty else { return [StyledLine("No parts found for boundary \"\(boundary)\"", .warning)] + hexDump(data) }
        for (number, raw) in parts.enumerated() {
            var part = raw
            if part.starts(with: Data("\r\n".utf8)) { part = part.dropFirst(2) }
            if part.suffix(2) == Data("\r\n".utf8) { part = part.dropLast(2) }
            let separator = part.range(of: Data("\r\n\r\n".utf8))
            let head = separator.map { String(decoding: part[part.startIndex..<$0.lowerBound], as: UTF8.self) } ?? ""
            let content = separator.map { part[$0.upperBound...] } ?? part
            let headers = head.split(separator: "\r\n").map(String.init)
            let disposition = headers.first { $0.lowercased().hasPrefix("content-disposition:") } ?? ""
            let name = MediaType.parameter("name", in: disposition)
            let file = MediaType.parameter("filename", in: disposition)
            let type = headers.first { $0.lowercased().hasPrefix("content-type:") }.map { String($0.dropFirst("content-type:".count)).trimmingSpaces() }
            if !lines.isEmpty { lines.append("") }
            var title = "Part \(number + 1)"
            if let name { title += "  \(name)" }
            if let file { title += "  file \"\(file)\"" }
            lines.append(StyledLine([Span(title, .heading), Span("  \(Format.size(content.count))" + (type.map { "  \($0)" } ?? ""), .dim)]))
            for header in headers { lines.append(StyledLine("  " + header, .dim)) }
            if let info = ImageInfo(Data(content)) {
                lines.append(StyledLine("  \(info.format) image, \(info.width) × \(info.height) px", .jsonString))
            } else if kind(of: Data(content), contentType: type) == .binary {
                lines.append(StyledLine("  (binary, \(content.count) bytes)", .dim))
            } else {
                for line in String(decoding: content, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).prefix(200) {
                    lines.append(StyledLine("  " + line.replacingOccurrences(of: "\r", with: ""), .jsonString))
                }
            }
        }
        return lines
    }

    // MARK: XML and HTML

    private static let voidElements: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]

    /// Markup re-indented: one tag or run of text per line, nested two
    /// spaces per level. Comments, declarations and HTML's void elements
    /// do not nest; a document cut short is indented as far as it goes.
    static func markup(_ text: String, limit: Int = maximumLines) -> [StyledLine] {
        var lines: [StyledLine] = []
        var depth = 0
        var rest = Substring(text)
        func add(_ piece: Substring, _ style: Style) {
            lines.append(StyledLine([Span(String(repeating: "  ", count: max(0, depth))), Span(String(piece), style)]))
        }
        while !rest.isEmpty, lines.count <= limit {
            guard let open = rest.firstIndex(of: "<") else {
                let trailing = rest.trimmingSpaces()
                if !trailing.isEmpty { add(Substring(trailing), .normal) }
                break
            }
            let before = rest[..<open].trimmingSpaces()
            if !before.isEmpty { add(Substring(before), .normal) }
            rest = rest[open...]
            let terminator = rest.hasPrefix("<!--") ? "-->" : ">"
            guard let close = rest.range(of: terminator) else {
                add(rest, .jsonKey)
                break
            }
            let tag = rest[..<close.upperBound]
            rest = rest[close.upperBound...]
            let name = tag.dropFirst().prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }.lowercased()
            if tag.hasPrefix("</") {
                depth -= 1
                add(tag, .jsonKey)
            } else if tag.hasPrefix("<!") || tag.hasPrefix("<?") || tag.hasSuffix("/>") || voidElements.contains(name) {
                add(tag, tag.hasPrefix("<!--") ? .dim : .jsonKey)
            } else {
                add(tag, .jsonKey)
                depth += 1
                // Raw text elements: their content is not markup.
                if name == "script" || name == "style", let end = rest.range(of: "</\(name)", options: .caseInsensitive) {
                    for line in rest[..<end.lowerBound].split(separator: "\n") where !line.trimmingSpaces().isEmpty {
                        add(Substring(line.trimmingSpaces()), .normal)
                    }
                    rest = rest[end.lowerBound...]
                }
            }
        }
        return lines
    }
}

extension StringProtocol {
    /// The text without leading and trailing white space.
    func trimmingSpaces() -> String {
        String(String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()))
    }
}
