import Foundation

/// The decoded form of URLs and form bodies, as the inspector shows them.
/// Filters match this form as well as the raw one, so what a person reads
/// on screen (`/search?q=café crème`) is what they can type in a filter.
///
/// ```swift
/// DecodedText.url("/search?q=caf%C3%A9+cr%C3%A8me")  // "/search?q=café crème"
/// ```
package enum DecodedText {
    /// `text` with percent-escapes decoded, and in the query (after `?`) a
    /// `+` read as a space, as form encoding writes it; nil when there is
    /// nothing to decode or the escapes do not form UTF-8.
    package static func url(_ text: String) -> String? {
        // Bytes, not `contains("%")`: a String argument goes through
        // Foundation's NSString on Linux, and a URL filter asks this of every
        // flow (docs/BENCHMARKS.md, "Costs behind the code").
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return nil }
        guard let question = text.firstIndex(of: "?") else { return text.removingPercentEncoding.flatMap { $0 == text ? nil : $0 } }
        let head = text[..<question].removingPercentEncoding
        let query = form(String(text[text.index(after: question)...]))
        guard let head, let query else { return nil }
        return head + "?" + query
    }

    /// A form-encoded text (`a=1&b=caf%C3%A9+x`) with `+` as a space and
    /// percent-escapes decoded; nil when the escapes do not form UTF-8.
    package static func form(_ text: String) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
