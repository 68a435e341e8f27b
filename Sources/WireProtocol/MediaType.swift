/// A `Content-Type` value, read one way by the agent (a response's
/// `mimeType`), the viewer (the list's type column, how a body is shown, HAR
/// files) and the OTLP receiver (which encoding a request uses).
///
/// The essence is the `type/subtype` before any `;`, blanks trimmed, in
/// lower case; parameters follow as `name=value` (names in any case, a value
/// quoted or not); a structured suffix is the part of the subtype after its
/// last `+` (`json` in `application/problem+json`).
///
/// ```swift
/// let type = MediaType("Application/Problem+JSON; charset=UTF-8")
/// type.essence                 // "application/problem+json"
/// type.suffix                  // "json"
/// type.isJSON                  // true
/// type.parameter("charset")    // "UTF-8"
/// ```
package struct MediaType: Sendable, Hashable {
    /// `type/subtype` in lower case, without parameters ("" when the value has none).
    package let essence: String
    /// The value as given, for its parameters.
    private let text: String

    /// Reads a `Content-Type` value.
    package init(_ contentType: String) {
        essence = Self.essence(of: contentType) ?? ""
        text = contentType
    }

    /// The type before the `/` (`application`).
    package var type: Substring { essence.prefix { $0 != "/" } }

    /// The subtype after the `/` (`problem+json`).
    package var subtype: Substring {
        guard let slash = essence.firstIndex(of: "/") else { return "" }
        return essence[essence.index(after: slash)...]
    }

    /// The structured syntax suffix (`json`, `xml`), nil when there is none.
    package var suffix: Substring? {
        let subtype = subtype
        return subtype.lastIndex(of: "+").map { subtype[subtype.index(after: $0)...] }
    }

    /// JSON or a kind of it: `application/json`, a `+json` suffix, and the
    /// subtypes that name it (`x-ndjson`, `jsonl`).
    package var isJSON: Bool { subtype.contains("json") }

    /// XML or HTML (`text/html`, `application/xhtml+xml`, `image/svg+xml`).
    package var isMarkup: Bool { subtype.contains("xml") || subtype.contains("html") }

    /// `application/x-www-form-urlencoded`.
    package var isForm: Bool { essence == "application/x-www-form-urlencoded" }

    /// `multipart/…` (its parts are split by the `boundary` parameter).
    package var isMultipart: Bool { type == "multipart" }

    /// The value of the parameter `name` (compared in any case), without
    /// quotes; nil when the value has no such parameter.
    package func parameter(_ name: String) -> String? { Self.parameter(name, in: text) }

    /// The parameter `name` of any header value built the same way,
    /// `value; name=value; …` (`Content-Disposition` too).
    package static func parameter(_ name: String, in headerValue: String) -> String? {
        for item in headerValue.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, trimmed(pair[0]).lowercased() == name.lowercased() else { continue }
            var value = trimmed(pair[1])
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            return String(value)
        }
        return nil
    }

    /// The essence of a `Content-Type` value (`text/html; charset=utf-8` →
    /// `text/html`), nil for no value. Read byte by byte, ASCII lowered
    /// here: the agent runs this for every response, and Foundation's
    /// trimming and `lowercased()` cost more than the rest of it.
    package static func essence(of contentType: String?) -> String? {
        guard var contentType else { return nil }
        return contentType.withUTF8 { all -> String in
            var start = 0
            var end = all.firstIndex(of: UInt8(ascii: ";")) ?? all.count
            while start < end, isBlank(all[start]) { start += 1 }
            while end > start, isBlank(all[end - 1]) { end -= 1 }
            let bytes = UnsafeBufferPointer(rebasing: all[start ..< end])
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return String(decoding: bytes, as: UTF8.self).lowercased() }
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                for index in bytes.indices {
                    let byte = bytes[index]
                    out[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
