/// A URL's host and port, or those of an address written `host:port`: the
/// one rule the agent, the filter language, the store and the OTLP receiver
/// read them by, so that `[::1]` is the same host in a `~d` filter, in the
/// list's host column and in a service's name.
///
/// - The authority follows `scheme://` (or starts the text when there is
///   none) and ends at the first `/`, `?` or `#`; user info, up to the last
///   `@`, is not part of it.
/// - `[v6]` or `[v6]:port`: the host is what the brackets hold.
/// - Otherwise a single colon separates host and port. With more than one
///   colon the whole is an IPv6 address without a port (`::1`, and
///   `::1:5000` too): an IPv6 address takes brackets to be given one.
/// - A port is one to five digits, at most 65535; anything else after the
///   colon is no port.
///
/// ```swift
/// URLAuthority(url: "https://user@[::1]:8443/x?q")   // host "::1", port 8443
/// URLAuthority(address: "10.0.0.5:40001")            // host "10.0.0.5", port 40001
/// URLAuthority(address: "::1")                       // host "::1", port nil
/// ```
package struct URLAuthority: Sendable, Hashable {
    /// The host as written (case kept), without brackets.
    package var host: String
    /// The port written after the host, nil when none (or not a port).
    package var port: Int?

    /// Where the parts of a URL are, as byte offsets into its UTF-8 text: for
    /// code that reads many URLs and must not allocate per URL.
    package struct Located: Sendable, Hashable {
        /// The scheme, before `://` (empty when the text has none).
        package var scheme: Range<Int>
        /// The host, without brackets.
        package var host: Range<Int>
        /// The port written, nil when none.
        package var port: Int?
        /// The whole authority, credentials included: where a user name,
        /// password or escape would be, and where the path begins (its end).
        package var authority: Range<Int>

        @usableFromInline
        init(scheme: Range<Int>, host: Range<Int>, port: Int?, authority: Range<Int>) {
            self.scheme = scheme
            self.host = host
            self.port = port
            self.authority = authority
        }
    }

    /// The host and port of an absolute URL (or of a bare authority).
    package init(url: String) {
        var text = url
        self = text.withUTF8 { bytes in
            let located = Self.locate(url: bytes)
            return URLAuthority(host: String(decoding: UnsafeBufferPointer(rebasing: bytes[located.host]), as: UTF8.self),
                                port: located.port)
        }
    }

    /// The host and port of an address written `host:port`, `[v6]:port`,
    /// or a host alone.
    package init(address: String) {
        var text = address
        self = text.withUTF8 { bytes in
            let (host, port) = Self.locate(authority: bytes)
            return URLAuthority(host: String(decoding: UnsafeBufferPointer(rebasing: bytes[host]), as: UTF8.self), port: port)
        }
    }

    /// A host and a port.
    package init(host: String, port: Int?) {
        self.host = host
        self.port = port
    }

    /// The authority as a URL writes it: `host` or `host:port`, an IPv6
    /// address in brackets (`[::1]:8080`).
    package var text: String {
        let host = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port.map { "\(host):\($0)" } ?? host
    }

    /// Finds scheme, host and port in a URL's UTF-8 bytes. Inlinable: the
    /// filters and the rules call it for every flow from other modules.
    @inlinable
    package static func locate(url: UnsafeBufferPointer<UInt8>) -> Located {
        var start = 0
        var scheme = 0 ..< 0
        // One pass over the scheme's characters: the first byte that cannot
        // be one must be the colon of `://`.
        var colon = 0
        while colon < url.count, isSchemeByte(url[colon]) { colon += 1 }
        if colon > 0, colon + 2 < url.count, url[colon] == UInt8(ascii: ":"),
           url[colon + 1] == UInt8(ascii: "/"), url[colon + 2] == UInt8(ascii: "/") {
            scheme = 0 ..< colon
            start = colon + 3
        }
        var end = start
        while end < url.count, url[end] != UInt8(ascii: "/"), url[end] != UInt8(ascii: "?"), url[end] != UInt8(ascii: "#") {
            end += 1
        }
        let authority = start ..< end
        if let at = url[start ..< end].lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        let (host, port) = locate(authority: UnsafeBufferPointer(rebasing: url[start ..< end]))
        return Located(scheme: scheme, host: (host.lowerBound + start) ..< (host.upperBound + start), port: port, authority: authority)
    }

    /// Finds host and port in `host[:port]` or `[v6][:port]` bytes (nothing
    /// before or after them).
    @inlinable
    package static func locate(authority bytes: UnsafeBufferPointer<UInt8>) -> (host: Range<Int>, port: Int?) {
        if bytes.first == UInt8(ascii: "["), let close = bytes.firstIndex(of: UInt8(ascii: "]")) {
            let port = close + 1 < bytes.count && bytes[close + 1] == UInt8(ascii: ":") ? number(bytes, from: close + 2) : nil
            return (1 ..< close, port)
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return (0 ..< bytes.count, nil) }
        guard bytes[(colon + 1)...].firstIndex(of: UInt8(ascii: ":")) == nil else { return (0 ..< bytes.count, nil) }
        return (0 ..< colon, number(bytes, from: colon + 1))
    }

    /// 80 for `http` and `ws`, 443 for `https` and `wss` (in any case), else nil.
    package static func defaultPort(ofScheme scheme: String) -> Int? {
        var scheme = scheme
        return scheme.withUTF8 { defaultPort(ofScheme: $0) }
    }

    /// The same, for a scheme given as UTF-8 bytes.
    @inlinable
    package static func defaultPort(ofScheme scheme: UnsafeBufferPointer<UInt8>) -> Int? {
        func `is`(_ name: StaticString) -> Bool {
            scheme.count == name.utf8CodeUnitCount
                && zip(scheme, UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)).allSatisfy { $0 | 0x20 == $1 }
        }
        if `is`("http") || `is`("ws") { return 80 }
        if `is`("https") || `is`("wss") { return 443 }
        return nil
    }

    /// A letter, digit, `+`, `-` or `.` (RFC 3986's scheme characters).
    @usableFromInline
    static func isSchemeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "0") ... UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// The decimal port in `bytes[start...]`: one to five digits, at most 65535.
    @usableFromInline
    static func number(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, bytes.count - start <= 5 else { return nil }
        var value = 0
        for byte in bytes[start...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value <= 65535 ? value : nil
    }
}
