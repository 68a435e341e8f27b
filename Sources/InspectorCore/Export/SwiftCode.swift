import Foundation
import ProtobufWire
import WireProtocol

/// A Swift program that sends a recorded request again with `URLRequest`
/// and `URLSession`, for a Swift developer to paste into a project or a
/// script (`swift file.swift`).
///
/// ```swift
/// let code = SwiftCode.make(for: flow.request)
/// // var request = URLRequest(url: URL(string: "http://127.0.0.1:8080/items/1")!)
/// // request.httpMethod = "PUT"
/// // request.setValue("application/json", forHTTPHeaderField: "Content-Type")
/// // request.httpBody = Data("{\"name\":\"Zoë\"}".utf8)
/// ```
///
/// Method, URL, header fields and body bytes are kept exactly. Limits of
/// `URLRequest`, stated in the code when they apply: a header field repeated
/// under one name is sent once with the values joined by commas, and
/// URLSession adds fields of its own (`User-Agent`, `Accept-Encoding`…)
/// that the request did not have. A text body is a string literal; any
/// other is base64.
enum SwiftCode {
    /// The program for `request`.
    static func make(for request: Request) -> String {
        var lines = [
            "import Foundation",
            "#if canImport(FoundationNetworking)",
            "import FoundationNetworking",
            "#endif",
            "",
        ]
        let url = foundationSafeURL(request.url)
        if url != request.url {
            lines.append("// Foundation's URL cannot hold some characters of the recorded URL as they were sent; they are percent-encoded here.")
        }
        lines += [
            "var request = URLRequest(url: URL(string: \(literal(url)))!)",
            "request.httpMethod = \(literal(request.method))",
        ]
        var seen = Set<String>()
        var repeated = false
        for header in request.headers {
            let first = seen.insert(header.name.lowercased()).inserted
            repeated = repeated || !first
            let call = first ? "setValue" : "addValue"
            lines.append("request.\(call)(\(literal(header.value)), forHTTPHeaderField: \(literal(header.name)))")
        }
        if repeated {
            lines.append("// URLRequest joins the values of a repeated header field with commas.")
        }
        if let body = request.body, !body.data.isEmpty {
            if let text = String(data: body.data, encoding: .utf8) {
                lines.append("request.httpBody = Data(\(literal(text)).utf8)")
            } else {
                lines.append("request.httpBody = Data(base64Encoded: \(literal(body.data.base64EncodedString())))!")
            }
            if body.isTruncated {
                lines.append("// The body was truncated: only \(body.data.count) of \(body.size) bytes were captured.")
            }
        }
        lines += [
            "",
            "let (data, response) = try await URLSession.shared.data(for: request)",
            "print((response as? HTTPURLResponse)?.statusCode ?? 0, data.count, \"bytes\")",
        ]
        return lines.joined(separator: "\n")
    }

    /// The URL with every character RFC 3986 does not allow percent-encoded
    /// (brackets too, outside an IPv6 host), and escapes already there kept.
    /// Given a URL with such characters, `URL(string:)` would encode the
    /// whole string again, `%` included, and send something else.
    static func foundationSafeURL(_ url: String) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#@!$&'()*+,;=".utf8)
        let hex = Set("0123456789abcdefABCDEF".utf8)
        let bytes = Array(url.utf8)
        let authorityEnd = bytes.withUnsafeBufferPointer { URLAuthority.locate(url: $0).authority.upperBound }
        var out = ""
        for (index, byte) in bytes.enumerated() {
            let isEscape = byte == UInt8(ascii: "%") && index + 2 < bytes.count && hex.contains(bytes[index + 1]) && hex.contains(bytes[index + 2])
            let isHostBracket = (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")) && index < authorityEnd
            if allowed.contains(byte) || isEscape || isHostBracket {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// A Swift string literal for `text`, escaping what a literal cannot hold as is.
    static func literal(_ text: String) -> String {
        QuotedText.quoted(text) { scalar in
            if scalar == "\0" { return "\\0" }
            let category = scalar.properties.generalCategory
            guard scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value)
                || category == .format || category == .lineSeparator || category == .paragraphSeparator else { return nil }
            return "\\u{\(String(scalar.value, radix: 16))}"
        }
    }
}

/// An HTTPie (`http`, version 3 or later) command line that sends a
/// recorded request again.
///
/// ```swift
/// let command = HTTPieCommand.make(for: flow.request)
/// // http --ignore-stdin PUT 'http://127.0.0.1:8080/items/1' \
/// //   'Content-Type:application/json' \
/// //   --raw '{"name":"Zoë"}'
/// ```
///
/// Header fields are `Name:value` items (`Name;` for an empty value); the
/// body goes in `--raw` when it is text, else it is piped in with `printf`.
/// HTTPie adds `User-Agent`, `Accept` and `Accept-Encoding` of its own
/// unless the request set them.
enum HTTPieCommand {
    /// The command for `request`, as POSIX shell text.
    static func make(for request: Request) -> String {
        let body = request.body.flatMap { $0.data.isEmpty ? nil : $0 }
        let text = body.flatMap { String(data: $0.data, encoding: .utf8) }
        var first = ["http"]
        if body == nil || text != nil { first.append("--ignore-stdin") }
        first += [CurlCommand.shellQuoted(request.method), CurlCommand.shellQuoted(request.url)]
        var lines = [first.joined(separator: " ")]
        for header in request.headers where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            lines.append(CurlCommand.shellQuoted(header.value.isEmpty ? "\(header.name);" : "\(header.name):\(header.value)"))
        }
        var pipe = ""
        if let body {
            if let text {
                lines.append("--raw " + CurlCommand.shellQuoted(text))
            } else {
                pipe = "printf " + CurlCommand.printfQuoted(body.data) + " | "
            }
            if body.isTruncated {
                lines.append("# body truncated: only \(body.data.count) of \(body.size) bytes were captured")
            }
        }
        return pipe + lines.joined(separator: " \\\n  ")
    }
}
