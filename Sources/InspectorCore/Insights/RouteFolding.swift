import WireProtocol

/// How a URL's path becomes a route: the segments that name one thing among
/// many are folded into placeholders, so `/users/42` and `/users/7` are one
/// route, `/users/{id}`.
///
/// A segment of digits only is `{id}`, and so is a typed id, a word of
/// letters, `_` or `-`, then four or more letters and digits with a digit
/// among them (`ord_52608`, `usr-7f3a2`, Stripe's `cus_NffrFeUfNV2Hib`);
/// a UUID (8-4-4-4-12 hex digits) is `{uuid}`; 16 or more hex digits with at
/// least one letter (a digest, a commit, a token) is `{hash}`; ten or more
/// letters and digits with at least two each of digits, capitals and small
/// letters (a base62 key, `dQw4w9WgXcQ`) is `{key}`. Words stay, even with a
/// digit (`v2`, `api-v2`, `oauth2`, `OAuth2Callback`, `utf-8`, `sha-256`):
/// a typed id's tail is four or more characters, and a key mixes all three
/// kinds of character more than a name does. The query and fragment are
/// left out.
///
/// ```swift
/// RouteFolding.route(ofPath: "/users/42/orders?page=2")   // "/users/{id}/orders"
/// RouteFolding.route(ofPath: "/api/orders/ord_52608")     // "/api/orders/{id}"
/// ```
enum RouteFolding {
    /// The route of a URL's path (the query and fragment left out).
    static func route(ofPath path: Substring) -> String {
        let end = path.firstIndex { $0 == "?" || $0 == "#" } ?? path.endIndex
        let segments = path[..<end].split(separator: "/", omittingEmptySubsequences: false)
        let folded = segments.map { placeholder(for: $0).map { "{\($0.rawValue)}" } ?? String($0) }.joined(separator: "/")
        return folded.isEmpty ? "/" : folded
    }

    /// The route of a URL: its path's (``route(ofPath:)``).
    static func route(ofURL url: String) -> String {
        var text = url
        // Insights fold every flow's URL: an ASCII one (nearly all) byte by
        // byte, as Characters and Foundation's search cost most of the build.
        if let route = text.withUTF8({ route(ofASCIIURL: $0) }) { return route }
        return route(ofPath: Substring(Format.pathAndQuery(of: url)))
    }

    /// What `route(ofPath: pathAndQuery(of: url))` gives, read from the URL's
    /// UTF-8 bytes; nil when it has any but ASCII (there Characters may join
    /// a separator to what follows it, and the slow path decides).
    static func route(ofASCIIURL bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var folded = [UInt8](repeating: 0, count: routeCapacity(ofURLBytes: bytes.count))
        var count = 0
        let ascii = folded.withUnsafeMutableBufferPointer { writeRoute(ofASCIIURL: bytes, into: $0, at: &count) }
        return ascii ? String(decoding: folded[..<count], as: UTF8.self) : nil
    }

    /// Room enough for the route of a URL of `count` bytes: a segment of one
    /// digit, `/1`, grows the most, to `/{id}`.
    static func routeCapacity(ofURLBytes count: Int) -> Int { 3 * count + 2 }

    /// Writes the route of an ASCII URL's bytes (``route(ofASCIIURL:)``)
    /// into `out` from `count` on, moving `count` past it, for a caller that
    /// puts a name around it without making strings (`out` has
    /// ``routeCapacity(ofURLBytes:)`` bytes free); false, with nothing
    /// written, when the URL is not ASCII.
    static func writeRoute(ofASCIIURL bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>,
                           at count: inout Int) -> Bool {
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return false }
        let slash = UInt8(ascii: "/"), question = UInt8(ascii: "?"), hash = UInt8(ascii: "#")
        var start = 0
        if bytes.count >= 3 {
            for index in 0 ... bytes.count - 3
            where bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == slash && bytes[index + 2] == slash {
                start = index + 3
                break
            }
        }
        // The path starts at the first `/` after the authority; a query there (`?`) or nothing leaves the root.
        guard let first = bytes[start...].firstIndex(where: { $0 == slash || $0 == question }), bytes[first] == slash else {
            out[count] = slash
            count += 1
            return true
        }
        let end = bytes[first...].firstIndex { $0 == question || $0 == hash } ?? bytes.count
        var segmentStart = first + 1
        while true {
            out[count] = slash
            count += 1
            let segmentEnd = bytes[segmentStart ..< end].firstIndex(of: slash) ?? end
            let segment = UnsafeBufferPointer(rebasing: bytes[segmentStart ..< segmentEnd])
            if let kind = placeholder(forBytes: segment) {
                kind.braced.withUTF8Buffer { braced in
                    for byte in braced {
                        out[count] = byte
                        count += 1
                    }
                }
            } else {
                for byte in segment {
                    out[count] = byte
                    count += 1
                }
            }
            guard segmentEnd < end else { break }
            segmentStart = segmentEnd + 1
        }
        return true
    }

    /// The kinds of folded segment.
    enum Placeholder: String, Sendable {
        case id, uuid, hash, key

        /// How a route writes it: `{id}`.
        var braced: StaticString {
            switch self {
            case .id: "{id}"
            case .uuid: "{uuid}"
            case .hash: "{hash}"
            case .key: "{key}"
            }
        }

        /// What the filter language's `~u` matches for it (`NSRegularExpression`).
        var pattern: String {
            switch self {
            case .id: #"(?:\d+|[A-Za-z]{1,12}[_-](?=[A-Za-z0-9]*\d)[A-Za-z0-9]{4,})"#
            case .uuid: #"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"#
            case .hash: #"(?=[0-9a-fA-F]{16,}(?:[/?#]|$))\d*[a-fA-F][0-9a-fA-F]*"#
            // Not a run of 16 hex digits, which is a hash; the lookaheads count each kind within the segment.
            case .key: #"(?![0-9a-fA-F]{16,}(?:[/?#]|$))(?=(?:[A-Za-z]*\d){2})(?=(?:[a-z0-9]*[A-Z]){2})(?=(?:[A-Z0-9]*[a-z]){2})[A-Za-z0-9]{10,}"#
            }
        }
    }

    /// The placeholder a segment folds into, or nil when it stays.
    static func placeholder(for segment: Substring) -> Placeholder? {
        placeholder(forBytes: segment.utf8)
    }

    /// The placeholder a segment's UTF-8 bytes fold into, or nil when it stays.
    static func placeholder(forBytes bytes: some Collection<UInt8>) -> Placeholder? {
        guard !bytes.isEmpty else { return nil }
        if bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return .id }
        if bytes.count == 36, isUUID(bytes) { return .uuid }
        if bytes.count >= 16, bytes.allSatisfy(isHexDigit) { return .hash }
        if isTypedID(bytes) { return .id }
        if isKey(bytes) { return .key }
        return nil
    }

    /// `ord_52608`: 1 to 12 letters, `_` or `-`, then 4 or more letters and digits, a digit among them.
    private static func isTypedID(_ bytes: some Collection<UInt8>) -> Bool {
        guard let separator = bytes.firstIndex(where: { $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else { return false }
        let prefix = bytes[..<separator], tail = bytes[bytes.index(after: separator)...]
        return (1...12).contains(prefix.count) && prefix.allSatisfy(isLetter)
            && tail.count >= 4 && tail.allSatisfy { isLetter($0) || isDigit($0) } && tail.contains(where: isDigit)
    }

    /// A base62 key: 10 or more letters and digits, at least two of each kind.
    private static func isKey(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 10 else { return false }
        var digits = 0, capitals = 0, smalls = 0
        for byte in bytes {
            switch byte {
            case 0x30...0x39: digits += 1
            case 0x41...0x5A: capitals += 1
            case 0x61...0x7A: smalls += 1
            default: return false
            }
        }
        return digits >= 2 && capitals >= 2 && smalls >= 2
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isLetter(_ byte: UInt8) -> Bool { byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A }

    /// A regular expression for `~u` matching the URLs of a route on `host`
    /// (any route when nil): literal segments escaped, placeholders as the
    /// segments they fold. (`~d` would find the host inside longer ones.)
    static func urlPattern(route: String?, host: String) -> String {
        let authority = "^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@]*@)?" + escaped(Substring(host)) + "(?::\\d+)?"
        guard let route else { return authority + "(?:[/?#]|$)" }
        let segments = route.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            if segment.hasPrefix("{"), segment.hasSuffix("}"), let kind = Placeholder(rawValue: String(segment.dropFirst().dropLast())) {
                return kind.pattern
            }
            return escaped(segment)
        }
        return authority + (route == "/" ? "/?" : segments.joined(separator: "/")) + "(?:[?#]|$)"
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }

    private static func isUUID(_ bytes: some Collection<UInt8>) -> Bool {
        for (offset, byte) in bytes.enumerated() {
            let isDash = offset == 8 || offset == 13 || offset == 18 || offset == 23
            if isDash ? byte != UInt8(ascii: "-") : !isHexDigit(byte) { return false }
        }
        return true
    }

    /// `text` with the regular expression's special characters escaped.
    static func escaped(_ text: Substring) -> String {
        var result = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
