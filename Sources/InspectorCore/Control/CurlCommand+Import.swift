import Foundation
import WireProtocol

/// Reading a curl command back into a request: what `:new curl …` imports,
/// as a person pastes it (a browser's "Copy as cURL", a README's example,
/// or ``CurlCommand/make(for:)``'s output, which it reads back exactly).
///
/// ```swift
/// let request = try CurlCommand.request(from: "curl -u ann:pw --json '{\"a\":1}' https://api.example.com/items")
/// // POST https://api.example.com/items, Content-Type and Accept application/json,
/// // Authorization: Basic YW5uOnB3
/// ```
extension CurlCommand {
    /// Why a command cannot be imported, in words for the notice line.
    struct ImportError: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The options that take no value and change nothing netinspect sends.
    static let ignoredFlags: Set<String> = [
        "-k", "--insecure", "-s", "--silent", "-S", "--show-error", "-L", "--location", "-v", "--verbose",
        "-i", "--include", "-g", "--globoff", "--path-as-is", "-f", "--fail", "--http1.1", "--http2",
        "-N", "--no-buffer", "-#", "--progress-bar", "--no-progress-meter",
    ]
    /// The options that take a value that changes nothing netinspect sends.
    static let ignoredWithValue: Set<String> = ["-m", "--max-time", "--connect-timeout", "-o", "--output", "--retry"]
    /// The options whose value is read, by their long name.
    static let valued: [String: String] = [
        "-X": "--request", "-H": "--header", "-d": "--data", "-u": "--user", "-A": "--user-agent",
        "-e": "--referer", "-b": "--cookie",
    ]
    static let valuedLong: Set<String> = [
        "--request", "--header", "--data", "--data-ascii", "--data-raw", "--data-binary", "--data-urlencode",
        "--json", "--user", "--user-agent", "--referer", "--cookie", "--url",
    ]

    /// The request `command` sends, with the header fields curl would add
    /// for its options (`-d`'s form type, `-u`'s Basic credentials); the
    /// ones curl adds to every request (`User-Agent`, `Accept`) are left to
    /// the client that sends it.
    /// - Throws: ``ImportError`` naming the option or word it cannot read.
    static func request(from command: String) throws(ImportError) -> Request {
        let commands: [[String]]
        do {
            commands = try ShellWords.split(command.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw ImportError(description: error.message)
        }
        guard let words = commands.last, words.first == "curl" else {
            throw ImportError(description: "not a curl command: it must start with curl")
        }
        var input: Data?
        if commands.count == 2 {
            input = try printfOutput(commands[0])
        } else if commands.count > 2 {
            throw ImportError(description: "only a printf may be piped into curl")
        }
        var options = try options(Array(words.dropFirst()))
        return try options.request(input: input)
    }

    /// The options in order, each long-named, with its value.
    private static func options(_ words: [String]) throws(ImportError) -> Options {
        var options = Options()
        var index = 0
        func value(for option: String, attached: String?) throws(ImportError) -> String {
            if let attached, !attached.isEmpty { return attached }
            index += 1
            guard index < words.count else { throw ImportError(description: "\(option) needs a value") }
            return words[index]
        }
        while index < words.count {
            let word = words[index]
            if word.hasPrefix("--") {
                if valuedLong.contains(word) {
                    try options.take(word, try value(for: word, attached: nil))
                } else if ignoredWithValue.contains(word) {
                    _ = try value(for: word, attached: nil)
                } else if !ignoredFlags.contains(word) {
                    try options.take(word, nil)
                }
            } else if word.hasPrefix("-"), word.count > 1 {
                // Short options may share a dash (-sSL), the last one taking a value (-sXPOST).
                var letters = Substring(word.dropFirst())
                while let letter = letters.popFirst() {
                    let short = "-\(letter)"
                    if let long = valued[short] {
                        try options.take(long, try value(for: short, attached: String(letters)))
                        break
                    } else if ignoredWithValue.contains(short) {
                        _ = try value(for: short, attached: String(letters))
                        break
                    } else if !ignoredFlags.contains(short) {
                        try options.take(short, nil)
                    }
                }
            } else {
                try options.take("--url", word)
            }
            index += 1
        }
        return options
    }

    /// What `printf FORMAT` writes, for a body piped in (``make(for:)``
    /// writes a binary body so).
    private static func printfOutput(_ words: [String]) throws(ImportError) -> Data {
        guard words.count == 2, words[0] == "printf" else {
            throw ImportError(description: "only `printf 'BODY' | curl …` may come before curl")
        }
        var bytes: [UInt8] = []
        var scalars = Array(words[1].unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "%":
                guard scalars.popFirst() == "%" else { throw ImportError(description: "printf's format may hold no % directive but %%") }
                bytes.append(UInt8(ascii: "%"))
            case "\\":
                guard let next = scalars.popFirst() else { bytes.append(UInt8(ascii: "\\")); break }
                let escapes: [Unicode.Scalar: UInt8] = ["n": 0x0A, "t": 0x09, "r": 0x0D, "a": 0x07, "b": 0x08, "f": 0x0C, "v": 0x0B,
                                                        "\\": 0x5C, "\"": 0x22, "'": 0x27]
                if let byte = escapes[next] {
                    bytes.append(byte)
                } else if ("0"..."7").contains(next) {
                    scalars.insert(next, at: scalars.startIndex)
                    bytes.append(UInt8(truncatingIfNeeded: ShellWords.digits(&scalars, radix: 8, upTo: 3) ?? 0))
                } else {
                    bytes += Array("\\\(next)".utf8)
                }
            default:
                bytes += Array(String(scalar).utf8)
            }
        }
        return Data(bytes)
    }
}

/// The options of one curl command, as read.
private struct Options {
    var method: String?
    var head = false
    var url: String?
    var headers: [HTTPHeader] = []
    /// Header names given as `-H 'Name:'`: curl sends none of that name.
    var removed: [String] = []
    /// The data options' values, in order; joined with `&` (`--json`: as they are).
    var data: [Piece] = []
    enum Piece {
        case bytes(Data)
        /// `@-`: what is piped in.
        case piped
    }
    var isJSON = false
    var derived: [HTTPHeader] = []
    var sendsDataInQuery = false

    mutating func take(_ option: String, _ value: String?) throws(CurlCommand.ImportError) {
        switch (option, value) {
        case ("--request", let method?): self.method = method
        case ("--url", let url?):
            guard self.url == nil else { throw CurlCommand.ImportError(description: "two URLs (\(self.url ?? "") and \(url)): netinspect sends one request") }
            self.url = url
        case ("--header", let field?): try header(field)
        case ("--data", let text?), ("--data-ascii", let text?): data.append(try dataValue(text, option: option))
        case ("--data-binary", let text?): data.append(try dataValue(text, option: option))
        case ("--data-raw", let text?): data.append(.bytes(Data(text.utf8)))
        case ("--data-urlencode", let text?): data.append(.bytes(try urlEncoded(text)))
        case ("--json", let text?):
            data.append(try dataValue(text, option: option))
            isJSON = true
        case ("--user", let credentials?):
            guard credentials.contains(":") else {
                throw CurlCommand.ImportError(description: "-u \(credentials) has no password (curl would ask for it): write -u user:password")
            }
            derived.append(HTTPHeader(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString()))
        case ("--user-agent", let agent?): derived.append(HTTPHeader(name: "User-Agent", value: agent))
        case ("--referer", let referer?): derived.append(HTTPHeader(name: "Referer", value: referer))
        case ("--cookie", let cookie?):
            guard cookie.contains("=") else {
                throw CurlCommand.ImportError(description: "-b \(cookie) reads cookies from a file; paste them as -b 'name=value; other=value'")
            }
            derived.append(HTTPHeader(name: "Cookie", value: cookie))
        case ("-I", nil), ("--head", nil): head = true
        case ("-G", nil), ("--get", nil): sendsDataInQuery = true
        case ("--compressed", nil): derived.append(HTTPHeader(name: "Accept-Encoding", value: "deflate, gzip"))
        default:
            throw CurlCommand.ImportError(description: "curl's \(option) is not an option netinspect imports (it reads -X, -H, -d, --data-raw, --data-binary, --data-urlencode, --json, -u, -A, -e, -b, -I, -G, --compressed)")
        }
    }

    private mutating func header(_ field: String) throws(CurlCommand.ImportError) {
        if let colon = field.firstIndex(of: ":") {
            let name = field[..<colon].trimmingCharacters(in: .whitespaces)
            let value = field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { throw CurlCommand.ImportError(description: "-H '\(field)' has no header name") }
            if value.isEmpty { removed.append(name) } else { headers.append(HTTPHeader(name: name, value: value)) }
        } else if field.hasSuffix(";"), !field.dropLast().contains(" ") {
            headers.append(HTTPHeader(name: String(field.dropLast()), value: ""))
        } else {
            throw CurlCommand.ImportError(description: "-H '\(field)' is not 'Name: value'")
        }
    }

    /// `-d`'s value: `@-` is what is piped in; `@FILE` a file netinspect does not read.
    private func dataValue(_ text: String, option: String) throws(CurlCommand.ImportError) -> Piece {
        guard text.hasPrefix("@") else { return .bytes(Data(text.utf8)) }
        guard text == "@-" else {
            throw CurlCommand.ImportError(description: "\(option) \(text) reads a file; paste the body inline (--data-raw '…')")
        }
        return .piped
    }

    private func urlEncoded(_ text: String) throws(CurlCommand.ImportError) -> Data {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encode = { (value: Substring) in value.addingPercentEncoding(withAllowedCharacters: allowed) ?? String(value) }
        if let equals = text.firstIndex(of: "=") {
            let name = text[..<equals]
            return Data(((name.isEmpty ? "" : name + "=") + encode(text[text.index(after: equals)...])).utf8)
        }
        guard !text.contains("@") else {
            throw CurlCommand.ImportError(description: "--data-urlencode \(text) reads a file; paste the value inline")
        }
        return Data(encode(Substring(text)).utf8)
    }

    mutating func request(input: Data?) throws(CurlCommand.ImportError) -> Request {
        guard var url else { throw CurlCommand.ImportError(description: "no URL") }
        if !url.contains("://") { url = "http://" + url }
        // Read as curl reads it, not as Foundation's URL would (which refuses `[` in a query).
        let scheme = url.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https", !URLAuthority(url: url).host.isEmpty else {
            throw CurlCommand.ImportError(description: "'\(url)' is not an http or https URL")
        }
        var pieces: [Data] = []
        for piece in data {
            switch (piece, input) {
            case (.bytes(let bytes), _): pieces.append(bytes)
            case (.piped, let input?): pieces.append(input)
            case (.piped, nil): throw CurlCommand.ImportError(description: "@- reads a body piped in, and nothing is")
            }
        }
        let separator = isJSON ? Data() : Data("&".utf8)
        var body = pieces.isEmpty ? nil : pieces.dropFirst().reduce(pieces[0]) { $0 + separator + $1 }
        if sendsDataInQuery, let query = body {
            url += (url.contains("?") ? "&" : "?") + String(decoding: query, as: UTF8.self)
            body = nil
        }
        var fields = headers
        var implied = derived
        if isJSON {
            implied += [HTTPHeader(name: "Content-Type", value: "application/json"), HTTPHeader(name: "Accept", value: "application/json")]
        } else if body != nil {
            implied.append(HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"))
        }
        for field in implied where fields.first(field.name) == nil && !removed.contains(where: { HTTPHeader.namesMatch($0, field.name) }) {
            fields.append(field)
        }
        let method = self.method ?? (head ? "HEAD" : body != nil ? "POST" : "GET")
        return Request(method: method, url: url, headers: fields, body: body.map { CapturedBody(data: $0) })
    }
}
