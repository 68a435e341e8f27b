import Foundation
import WireProtocol

/// A request or response as a person edits it in `$EDITOR`: the request or
/// status line, one `Name: value` line per header field, an empty line, then
/// the body.
///
/// A body that is not text, or that the log holds only the start of, is
/// written as one placeholder line; left as it is, the agent keeps the
/// original body. A value the agent redacted reads as its marker; left as it
/// is, the agent keeps the original value. So an edit never needs a secret
/// the log does not have. The fields the client adds itself (AsyncHTTPClient's
/// `Host`, what libcurl adds for URLSession) follow the app's under a `#`
/// line that says so: left in place they are sent as the client sends them,
/// deleted they are not sent, changed they are sent as changed.
///
/// ```swift
/// let text = HTTPMessageText.text(of: flow.request)
/// // POST https://api.example.com/orders HTTP/1.1
/// // Content-Type: application/json
/// //
/// // {"id":1}
/// let edited = try HTTPMessageText.request(from: text, original: flow.request)
/// ```
package enum HTTPMessageText {
    /// Why an edited text is not an HTTP message.
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        /// Line number (1-based) and what is wrong there.
        var line: Int
        var message: String
        package var description: String { "line \(line): \(message)" }
    }

    /// The placeholder line of a body the editor cannot show in full.
    static func placeholder(for body: CapturedBody) -> String {
        let why = body.isTruncated ? "only its first \(body.data.count) bytes were captured" : "it is not UTF-8 text"
        return "<netinspect: body of \(body.size) bytes kept as it is (\(why)); replace this line to send another body>"
    }

    /// The line above the fields the client added; any line of the head
    /// that starts with `#` is a comment.
    static let clientFieldsLine = "# Added by the client, not the app (delete a line to send the request without it):"

    /// The request as editable text.
    static func text(of request: WireProtocol.Request) -> String {
        text(firstLine: "\(request.method) \(request.url) HTTP/1.1", headers: request.headers, clientHeaders: request.clientHeaders,
             body: request.body)
    }

    /// The response as editable text.
    static func text(of response: Response) -> String {
        return text(firstLine: "HTTP/1.1 \(response.statusCode) \(Format.reason(response.statusCode))", headers: response.headers,
                    clientHeaders: [], body: response.body)
    }

    private static func text(firstLine: String, headers: [HTTPHeader], clientHeaders: [HTTPHeader], body: CapturedBody?) -> String {
        var lines = [firstLine] + headers.map { "\($0.name): \($0.value)" }
        if !clientHeaders.isEmpty { lines += [clientFieldsLine] + clientHeaders.map { "\($0.name): \($0.value)" } }
        lines.append("")
        var text = lines.joined(separator: "\n") + "\n"
        if let body, !body.data.isEmpty || body.size > 0 {
            if !body.isTruncated, let utf8 = String(data: body.data, encoding: .utf8) {
                text += utf8
            } else {
                text += placeholder(for: body)
            }
            // Editors end files with a newline; one is always written and read back off.
            text += "\n"
        }
        return text
    }

    /// The request a person made of `original`.
    /// - Throws: ``ParseError`` for a missing request line, URL or header colon.
    static func request(from text: String, original: WireProtocol.Request) throws(ParseError) -> WireProtocol.Request {
        let (first, headers, clientLines, bodyText) = try split(text)
        let parts = first.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 || parts.count == 3, parts[0].allSatisfy({ $0.isLetter }) else {
            throw ParseError(line: 1, message: "expected 'METHOD URL [HTTP/1.1]'")
        }
        let url = String(parts[1])
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https", parsed.host != nil else {
            throw ParseError(line: 1, message: "'\(url)' is not an http or https URL")
        }
        var request = original
        request.method = parts[0].uppercased()
        request.url = url
        // A client's field left as it was stays the client's; one a person
        // changed or added under the line is theirs, sent as the app's are.
        let kept = clientLines.filter { original.clientHeaders.contains($0) }
        request.headers = headers + clientLines.filter { !original.clientHeaders.contains($0) }
        request.clientHeaders = kept
        request.body = body(bodyText, original: original.body)
        return request
    }

    /// The response a person made of `original`.
    /// - Throws: ``ParseError`` for a missing status line or header colon.
    static func response(from text: String, original: Response) throws(ParseError) -> Response {
        let (first, headers, clientLines, bodyText) = try split(text)
        let parts = first.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]), (100...999).contains(code) else {
            throw ParseError(line: 1, message: "expected 'HTTP/1.1 CODE [REASON]'")
        }
        var response = original
        response.statusCode = code
        response.headers = headers + clientLines
        response.body = body(bodyText, original: original.body)
        return response
    }

    /// The first line, the fields above and below ``clientFieldsLine``, the body.
    private static func split(_ text: String) throws(ParseError) -> (String, [HTTPHeader], [HTTPHeader], String?) {
        // "\r\n" is one Character in Swift: split on scalars, after turning CRLF into LF.
        var lines = text.replacingOccurrences(of: "\r\n", with: "\n").unicodeScalars
            .split(separator: "\n", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        while lines.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeFirst() }
        guard let first = lines.first else { throw ParseError(line: 1, message: "the message is empty") }
        var headers: [HTTPHeader] = []
        var clientHeaders: [HTTPHeader]?
        var index = 1
        while index < lines.count, !lines[index].isEmpty {
            let line = lines[index]
            if line.hasPrefix("#") {
                if line == clientFieldsLine { clientHeaders = clientHeaders ?? [] }
                index += 1
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw ParseError(line: index + 1, message: "expected 'Name: value' (an empty line ends the headers)")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            guard !name.contains(" ") else { throw ParseError(line: index + 1, message: "a header name has no spaces") }
            let field = HTTPHeader(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            if clientHeaders != nil { clientHeaders!.append(field) } else { headers.append(field) }
            index += 1
        }
        let firstLine = first.trimmingCharacters(in: .whitespaces)
        guard index < lines.count else { return (firstLine, headers, clientHeaders ?? [], nil) }
        var body = lines[(index + 1)...].joined(separator: "\n")
        if body.hasSuffix("\n") { body.removeLast() }
        return (firstLine, headers, clientHeaders ?? [], body.isEmpty ? nil : body)
    }

    private static func body(_ text: String?, original: CapturedBody?) -> CapturedBody? {
        guard let text else { return nil }
        if let original, text == placeholder(for: original) {
            // Still marked truncated: the agent keeps its own copy.
            return CapturedBody(data: original.data, size: original.size, isTruncated: true)
        }
        return CapturedBody(data: Data(text.utf8))
    }
}
