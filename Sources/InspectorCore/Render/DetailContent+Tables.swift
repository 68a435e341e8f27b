import FlowFilter
import Foundation
import WireProtocol

/// The decoded tables of the Request and Response tabs (query parameters,
/// cookies) and the connection lines of the Timing tab.
extension DetailContent {
    /// `Query (n)`: each parameter of the URL, decoded as the list shows it.
    static func queryTable(_ url: String) -> [StyledLine] {
        guard let question = url.firstIndex(of: "?") else { return [] }
        let query = url[url.index(after: question)...].prefix { $0 != "#" }
        let pairs = query.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in DecodedText.form(String(text)) ?? String(text) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
        return table("Query", pairs)
    }

    /// `Cookies (n)`: the request's `Cookie` header, one cookie a row.
    static func requestCookies(_ headers: [HTTPHeader]) -> [StyledLine] {
        let pairs = headers.filter { $0.name.caseInsensitiveCompare("Cookie") == .orderedSame }
            .flatMap { $0.value.split(separator: ";") }
            .map { cookie -> (String, String) in
                let parts = cookie.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }
        return table("Cookies", pairs)
    }

    /// `Set-Cookie (n)`: each cookie the response sets, its attributes after it.
    static func responseCookies(_ headers: [HTTPHeader]) -> [StyledLine] {
        let pairs = headers.filter { $0.name.caseInsensitiveCompare("Set-Cookie") == .orderedSame }.map { header -> (String, String) in
            let parts = header.value.split(separator: ";", maxSplits: 1)
            let pair = (parts.first ?? "").split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let attributes = parts.count > 1 ? "  " + parts[1].trimmingCharacters(in: .whitespaces) : ""
            return (String(pair.first ?? ""), (pair.count > 1 ? String(pair[1]) : "") + attributes)
        }
        return table("Set-Cookie", pairs)
    }

    private static func table(_ title: String, _ pairs: [(String, String)]) -> [StyledLine] {
        guard !pairs.isEmpty else { return [] }
        let width = min(24, pairs.map { DisplayWidth.of($0.0) }.max() ?? 0)
        return ["", StyledLine("\(title) (\(pairs.count))", .heading)]
            + pairs.map { StyledLine([Span($0.0.fitted(toWidth: width), .jsonKey), Span("  "), Span($0.1)]) }
    }

    /// What the log tells of the connection: scheme, host and port from the
    /// URL, whether TLS and a new connection were needed from the client's
    /// phases, and who sent it. The agent reports no HTTP version, remote
    /// address or certificate (the wire model has no field for them).
    static func connectionLines(_ log: NetworkLog) -> [StyledLine] {
        if let path = log.changes?.mockedFrom {
            // A map-local answer never reached the host its URL names.
            return [StyledLine([Span("Connection    ", .heading), Span("none: answered from \(path) by a map-local rule", .dim)])]
        }
        if log.changes?.serverReplay != nil {
            return [StyledLine([Span("Connection    ", .heading), Span("none: answered by server replay", .dim)])]
        }
        guard let url = URL(string: log.request.url), let scheme = url.scheme?.lowercased(), url.host != nil else { return [] }
        var authority = URLAuthority(url: log.request.url)
        authority.port = authority.port ?? URLAuthority.defaultPort(ofScheme: scheme) ?? 80
        var lines = [StyledLine([Span("Connection    ", .heading), Span("\(scheme)://\(authority.text)")])]
        if let phases = log.timing.phases {
            var facts: [String] = []
            if let tls = phases.tls, tls > 0 { facts.append("TLS handshake \(Format.milliseconds(tls))") }
            if let connect = phases.connect {
                facts.append(connect > 0 ? "new connection, connect \(Format.milliseconds(connect))" : "reused connection (no connect)")
            }
            if let dns = phases.dns, dns > 0 { facts.append("DNS \(Format.milliseconds(dns))") }
            if !facts.isEmpty { lines.append(StyledLine([Span("              "), Span(facts.joined(separator: ", "), .dim)])) }
        }
        return lines
    }
}
