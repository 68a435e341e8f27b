import WireProtocol

/// `~d`: the URL's host, and its port when the argument names one.
extension FilterExpression {
    /// The filter `~d text` stands for: a host and a port when `text` ends
    /// in `:PORT` (`127.0.0.1:8000`, `example.com:443`, `[::1]:8080`, or
    /// `:8080` for any host on that port), else the host alone. Host and
    /// port are read as everywhere else (``URLAuthority``): an IPv6 address
    /// takes brackets to be given a port, `::1` is a host, and the host a
    /// URL is matched by is its host without brackets.
    ///
    /// ```swift
    /// FilterExpression.domainFilter("127.0.0.1:8000")   // .domain(127.0.0.1, port: 8000)
    /// ```
    static func domainFilter(_ text: String) -> FilterExpression {
        let authority = URLAuthority(address: text)
        guard let port = authority.port else {
            // No port: the text is searched for, an IPv6 address without its brackets.
            return .domain(FilterPattern(literal: text.hasPrefix("[") ? authority.host : text), port: nil)
        }
        return .domain(FilterPattern(literal: authority.host), port: port)
    }

    /// Whether `url`'s host contains `pattern` and, when `port` is given,
    /// the URL's port (the scheme's default when it names none) is `port`.
    static func domainMatches(_ url: String, _ pattern: FilterPattern, port: Int?) -> Bool {
        withUTF8(url) { url in
            let authority = URLAuthority.locate(url: url)
            if let port {
                let named = authority.port ?? URLAuthority.defaultPort(ofScheme: UnsafeBufferPointer(rebasing: url[authority.scheme]))
                if named != port { return false }
            }
            return pattern.matches(utf8: UnsafeBufferPointer(rebasing: url[authority.host]))
        }
    }
}
