/// `~d`: the URL's host, and its port when the argument names one.
extension FilterExpression {
    /// The filter `~d text` stands for: a host and a port when `text` ends
    /// in `:PORT` (`127.0.0.1:8000`, `example.com:443`, `[::1]:8080`, or
    /// `:8080` for any host on that port), else the host alone. An IPv6
    /// address takes brackets to be given a port: `::1` is a host.
    ///
    /// ```swift
    /// FilterExpression.domainFilter("127.0.0.1:8000")   // .domain(127.0.0.1, port: 8000)
    /// ```
    static func domainFilter(_ text: String) -> FilterExpression {
        let bytes = Array(text.utf8)
        guard let colon = bytes.lastIndex(of: UInt8(ascii: ":")), colon + 1 < bytes.count,
              bytes[(colon + 1)...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let port = Int(String(decoding: bytes[(colon + 1)...], as: UTF8.self)), port <= 65535
        else { return .domain(FilterPattern(literal: text), port: nil) }
        let host = bytes[..<colon]
        // Unbracketed, a colon before the last one makes the whole an IPv6 address.
        let bracketed = host.first == UInt8(ascii: "[") && host.last == UInt8(ascii: "]")
        guard bracketed || !host.contains(UInt8(ascii: ":")) else { return .domain(FilterPattern(literal: text), port: nil) }
        return .domain(FilterPattern(literal: String(decoding: host, as: UTF8.self)), port: port)
    }

    /// Whether `url`'s host contains `pattern` and, when `port` is given,
    /// the URL's port (the scheme's default when it names none) is `port`.
    static func domainMatches(_ url: String, _ pattern: FilterPattern, port: Int?) -> Bool {
        withUTF8(url) { url in
            let authority = authority(ofURL: url)
            if let port, authority.port != port { return false }
            return pattern.matches(utf8: UnsafeBufferPointer(rebasing: url[authority.host]))
        }
    }

    /// The host of an absolute URL (after `scheme://` and any `user@`, up to
    /// the port, path, query or fragment; brackets of an IPv6 literal kept)
    /// and its port: the one written, else 80 for `http` and `ws`, 443 for
    /// `https` and `wss`, else nil.
    static func authority(ofURL url: UnsafeBufferPointer<UInt8>) -> (host: Range<Int>, port: Int?) {
        var start = 0
        var scheme = 0 ..< 0
        if let colon = url.firstIndex(of: UInt8(ascii: ":")),
           colon + 2 < url.count, url[colon + 1] == UInt8(ascii: "/"), url[colon + 2] == UInt8(ascii: "/") {
            scheme = 0 ..< colon
            start = colon + 3
        }
        var end = start
        while end < url.count, url[end] != UInt8(ascii: "/"), url[end] != UInt8(ascii: "?"), url[end] != UInt8(ascii: "#") {
            end += 1
        }
        if let at = url[start ..< end].lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        var hostEnd = end
        if url[start ..< end].first == UInt8(ascii: "[") {
            if let bracket = url[start ..< end].firstIndex(of: UInt8(ascii: "]")) { hostEnd = bracket + 1 }
        } else if let colon = url[start ..< end].firstIndex(of: UInt8(ascii: ":")) {
            hostEnd = colon
        }
        let written = url[hostEnd ..< end]
        guard written.first == UInt8(ascii: ":"), written.count > 1 else {
            return (start ..< hostEnd, defaultPort(ofScheme: UnsafeBufferPointer(rebasing: url[scheme])))
        }
        var port = 0
        for digit in written.dropFirst() {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9"), port <= 65535 else { return (start ..< hostEnd, nil) }
            port = port * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return (start ..< hostEnd, port)
    }

    private static func defaultPort(ofScheme scheme: UnsafeBufferPointer<UInt8>) -> Int? {
        func `is`(_ name: StaticString) -> Bool {
            scheme.count == name.utf8CodeUnitCount
                && zip(scheme, UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)).allSatisfy { $0 | 0x20 == $1 }
        }
        if `is`("http") || `is`("ws") { return 80 }
        if `is`("https") || `is`("wss") { return 443 }
        return nil
    }
}
