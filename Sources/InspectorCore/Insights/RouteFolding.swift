import WireProtocol

/// How a URL's path becomes a route: the segments that name one thing among
/// many are folded into placeholders, so `/users/42` and `/users/7` are one
/// route, `/users/{id}`.
///
/// A segment of digits only is `{id}`; a UUID (8-4-4-4-12 hex digits) is
/// `{uuid}`; 16 or more hex digits with at least one letter (a digest, a
/// commit, a token) is `{hash}`. Anything else stays as it is. The query and
/// fragment are left out.
///
/// ```swift
/// RouteFolding.route(ofPath: "/users/42/orders?page=2")   // "/users/{id}/orders"
/// ```
package enum RouteFolding {
    /// The route of a URL's path (the query and fragment left out).
    package static func route(ofPath path: Substring) -> String {
        let end = path.firstIndex { $0 == "?" || $0 == "#" } ?? path.endIndex
        let segments = path[..<end].split(separator: "/", omittingEmptySubsequences: false)
        let folded = segments.map { placeholder(for: $0).map { "{\($0.rawValue)}" } ?? String($0) }.joined(separator: "/")
        return folded.isEmpty ? "/" : folded
    }

    /// The route of a URL: its path's (``route(ofPath:)``).
    package static func route(ofURL url: String) -> String {
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
    package enum Placeholder: String, Sendable {
        case id, uuid, hash

        /// How a route writes it: `{id}`.
        var braced: StaticString {
            switch self {
            case .id: "{id}"
            case .uuid: "{uuid}"
            case .hash: "{hash}"
            }
        }

        /// What the filter language's `~u` matches for it (`NSRegularExpression`).
        var pattern: String {
            switch self {
            case .id: #"\d+"#
            case .uuid: #"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"#
            case .hash: #"(?=[0-9a-fA-F]{16,}(?:[/?#]|$))\d*[a-fA-F][0-9a-fA-F]*"#
            }
        }
    }

    /// The placeholder a segment folds into, or nil when it stays.
    package static func placeholder(for segment: Substring) -> Placeholder? {
        placeholder(forBytes: segment.utf8)
    }

    /// The placeholder a segment's UTF-8 bytes fold into, or nil when it stays.
    static func placeholder(forBytes bytes: some Collection<UInt8>) -> Placeholder? {
        guard !bytes.isEmpty else { return nil }
        if bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return .id }
        if bytes.count == 36, isUUID(bytes) { return .uuid }
        if bytes.count >= 16, bytes.allSatisfy(isHexDigit) { return .hash }
        return nil
    }

    /// A regular expression for `~u` matching the URLs of a route on `host`
    /// (any route when nil): literal segments escaped, placeholders as the
    /// segments they fold. (`~d` would find the host inside longer ones.)
    package static func urlPattern(route: String?, host: String) -> String {
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
