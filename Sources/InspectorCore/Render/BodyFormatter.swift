import Foundation
import WireProtocol

/// Turns a captured body into styled lines by its type: JSON pretty-printed
/// with colour, form-urlencoded as a table, text as text, anything else as a
/// hex dump. Nothing here validates strictly: a truncated JSON body is still
/// indented as far as it goes.
enum BodyFormatter {
    /// How a body is shown.
    package enum Kind: Sendable, Equatable {
        /// JSON, re-indented and coloured; form-urlencoded, as a table;
        /// text, as it is; anything else, as a hex dump.
        case json, form, text, binary
        /// An image (PNG, JPEG, GIF, WebP), described: format, size in
        /// pixels and bytes, then the first bytes in hex.
        case image
        /// A multipart body, part by part.
        case multipart
        /// XML or HTML, re-indented.
        case markup
    }

    /// Lines beyond this are left out, with a notice, unless the detail view
    /// asks for the whole body (a search that found nothing in the lines shown).
    static let maximumLines = 5_000

    /// The line that ends a body cut at the line limit.
    static let moreLinesNotice = "… more lines not shown (/ searches the whole body)"

    /// Picks the kind from the declared type, then from the bytes.
    static func kind(of data: Data, contentType: String?) -> Kind {
        let type = MediaType(contentType ?? "")
        if type.isForm { return .form }
        if type.isJSON { return .json }
        if type.isMultipart, type.parameter("boundary") != nil { return .multipart }
        if ImageInfo(data) != nil { return .image }
        if type.isMarkup { return .markup }
        guard let text = String(data: data, encoding: .utf8), !looksBinary(text) else {
            // A body cut in the middle of a UTF-8 sequence is still text.
            if data.count > 3, let text = String(data: data.dropLast(3), encoding: .utf8), !looksBinary(text) {
                return type.essence.isEmpty && looksLikeJSON(text) ? .json : .text
            }
            return .binary
        }
        if type.essence.isEmpty, looksLikeJSON(text) { return .json }
        return .text
    }

    /// How a person chose to see bodies of one content type (mitmproxy's view
    /// modes): `auto` picks by content type and content, the others force a form.
    ///
    /// ```swift
    /// BodyFormatter.lines(for: body, contentType: "application/json", view: .hex)
    /// ```
    enum View: String, Sendable, CaseIterable {
        case auto, raw, hex, json, form, markup

        /// The next mode in the cycle of the key.
        var next: View { Self.allCases[(Self.allCases.firstIndex(of: self)! + 1) % Self.allCases.count] }

        var forcedKind: Kind? {
            switch self {
            case .auto: nil
            case .raw: .text
            case .hex: .binary
            case .json: .json
            case .form: .form
            case .markup: .markup
            }
        }
    }

    /// The lines for a body (notices included), in the chosen view.
    static func lines(for body: CapturedBody, contentType: String?, dropped: Bool = false, view: View = .auto,
                             limit: Int = maximumLines) -> [StyledLine] {
        var lines: [StyledLine] = []
        if dropped {
            lines.append(StyledLine("Body dropped to stay within the memory budget (\(Format.size(body.size)))", .warning))
            return lines
        }
        if body.isTruncated {
            lines.append(StyledLine(
                "Body truncated: showing \(Format.size(body.data.count)) of \(Format.size(body.size)) (\(body.size) bytes)",
                .warning
            ))
        }
        if body.data.isEmpty {
            if !body.isTruncated { lines.append(StyledLine("(empty body)", .dim)) }
            return lines
        }
        let content: [StyledLine]
        switch view.forcedKind ?? kind(of: body.data, contentType: contentType) {
        case .json: content = json(decodedText(body.data), limit: limit)
        case .form: content = form(decodedText(body.data))
        case .text: content = textLines(decodedText(body.data), limit: limit)
        case .binary: content = hexDump(body.data, limit: limit)
        case .image: content = ImageInfo(body.data).map { image($0, data: body.data, size: body.size) } ?? hexDump(body.data, limit: limit)
        case .multipart: content = multipart(body.data, boundary: contentType.flatMap { MediaType($0).parameter("boundary") } ?? "")
        case .markup: content = markup(decodedText(body.data), limit: limit)
        }
        lines += content.prefix(limit)
        if content.count > limit {
            lines.append(StyledLine(moreLinesNotice, .dim))
        }
        return lines
    }

    /// Text's lines, ended by LF, CRLF or CR alone (an event stream may use
    /// any; sse-starlette writes CRLF). CRLF is one Character to Swift, so a
    /// split at "\n" alone would leave such a body one line.
    private static func textLines(_ text: String, limit: Int) -> [StyledLine] {
        text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }.prefix(limit + 1).map { StyledLine(String($0)) }
    }

    private static func decodedText(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self)
    }

    private static func looksBinary(_ text: String) -> Bool {
        var controls = 0
        var total = 0
        for scalar in text.unicodeScalars.prefix(4096) {
            total += 1
            if scalar.value < 0x20, scalar != "\n", scalar != "\r", scalar != "\t" { controls += 1 }
        }
        return total > 0 && controls * 20 > total
    }

    private static func looksLikeJSON(_ text: String) -> Bool {
        guard let first = text.first(where: { !$0.isWhitespace }) else { return false }
        return first == "{" || first == "["
    }

    // MARK: JSON

    /// Re-indents JSON text token by token, colouring keys, strings, numbers
    /// and literals. Key order and number spelling are kept as sent.
    static func json(_ text: String, limit: Int = maximumLines) -> [StyledLine] {
        var printer = JSONPrinter()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count, printer.lines.count <= limit {
            let scalar = scalars[index]
            switch scalar {
            case "{", "[":
                let close: Unicode.Scalar = scalar == "{" ? "}" : "]"
                var next = index + 1
                while next < scalars.count, scalars[next].properties.isWhitespace { next += 1 }
                if next < scalars.count, scalars[next] == close {
                    printer.append(String(scalar) + String(close), .jsonPunctuation)
                    index = next
                } else {
                    printer.append(String(scalar), .jsonPunctuation)
                    printer.depth += 1
                    printer.newLine()
                }
            case "}", "]":
                printer.depth = max(0, printer.depth - 1)
                printer.newLine()
                printer.append(String(scalar), .jsonPunctuation)
            case ",":
                printer.append(",", .jsonPunctuation)
                printer.newLine()
            case ":":
                printer.append(": ", .jsonPunctuation)
            case "\"":
                var end = index + 1
                while end < scalars.count, scalars[end] != "\"" {
                    end += scalars[end] == "\\" ? 2 : 1
                }
                end = min(end, scalars.count - 1)
                var string = String.UnicodeScalarView()
                string.append(contentsOf: scalars[index...end])
                var after = end + 1
                while after < scalars.count, scalars[after].properties.isWhitespace { after += 1 }
                let isKey = after < scalars.count && scalars[after] == ":"
                printer.append(String(string), isKey ? .jsonKey : .jsonString)
                index = end
            case _ where scalar.properties.isWhitespace:
                break
            default:
                var end = index
                while end < scalars.count, !"{}[],:\" \t\r\n".unicodeScalars.contains(scalars[end]) { end += 1 }
                var word = String.UnicodeScalarView()
                word.append(contentsOf: scalars[index..<end])
                let text = String(word)
                printer.append(text, ["true", "false", "null"].contains(text) ? .jsonLiteral : .jsonNumber)
                index = end - 1
            }
            index += 1
        }
        printer.flush()
        return printer.lines
    }

    private struct JSONPrinter {
        var lines: [StyledLine] = []
        var current: [Span] = []
        var depth = 0

        mutating func append(_ text: String, _ style: Style) {
            if current.isEmpty, depth > 0 { current.append(Span(String(repeating: "  ", count: depth))) }
            current.append(Span(text, style))
        }

        mutating func newLine() {
            guard !current.isEmpty else { return }
            lines.append(StyledLine(current))
            current = []
        }

        mutating func flush() { newLine() }
    }

    // MARK: Form

    /// `a=1&b=two+words` as a two-column table of decoded names and values.
    static func form(_ text: String) -> [StyledLine] {
        let pairs = text.split(separator: "&").map { item -> (String, String) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decodeFormComponent(parts[0]), parts.count > 1 ? decodeFormComponent(parts[1]) : "")
        }
        let nameWidth = min(30, pairs.map { DisplayWidth.of($0.0) }.max() ?? 0)
        return pairs.map { name, value in
            StyledLine([Span(name.fitted(toWidth: nameWidth), .jsonKey), Span(" │ ", .dim), Span(value, .jsonString)])
        }
    }

    private static func decodeFormComponent(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    // MARK: Binary

    /// The classic 16-bytes-per-line dump: offset, hex in two groups, ASCII.
    static func hexDump(_ data: Data, limit: Int = maximumLines) -> [StyledLine] {
        let bytes = [UInt8](data.prefix(limit.multipliedReportingOverflow(by: 16).overflow ? Int.max : limit * 16))
        var lines: [StyledLine] = []
        lines.reserveCapacity(bytes.count / 16 + 1)
        let digits = Array("0123456789abcdef")
        for start in stride(from: 0, to: bytes.count, by: 16) {
            let chunk = bytes[start..<min(start + 16, bytes.count)]
            var hex = ""
            var ascii = ""
            for (offset, byte) in chunk.enumerated() {
                if offset == 8 { hex += " " }
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0xF)])
                hex += " "
                ascii.append((0x20..<0x7F).contains(byte) ? Character(Unicode.Scalar(byte)) : ".")
            }
            lines.append(StyledLine([
                Span(String(format: "%08x  ", start), .dim),
                Span(hex.padding(toLength: 49, withPad: " ", startingAt: 0)),
                Span(" |" + ascii + "|", .jsonString),
            ]))
        }
        if data.count > bytes.count { lines.append(StyledLine("… \(data.count - bytes.count) more bytes not shown", .dim)) }
        return lines
    }
}
