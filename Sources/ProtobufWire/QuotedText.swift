/// Text in double quotes with the escapes every C-like literal shares
/// (a decoded protobuf string, a JSON value in a diff, a Swift literal) (`\"`,
/// `\\`, `\n`, `\r`, `\t`); each language says how it writes the rest of the
/// scalars it cannot hold as they are.
///
/// ```swift
/// QuotedText.quoted("a\tb") { _ in nil }   // "\"a\\tb\""
/// ```
package enum QuotedText {
    /// `text` quoted; `escape` returns a scalar's escape, or nil to keep it.
    package static func quoted(_ text: String, escape: (Unicode.Scalar) -> String?) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if let escaped = escape(scalar) { out += escaped } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}
