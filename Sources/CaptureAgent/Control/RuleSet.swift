import FlowFilter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The traffic rules the connected viewer pushed, compiled for matching.
///
/// Rules apply in order: header rules and map-remote rules change the
/// request cumulatively; the first map-local rule that matches answers it.
/// A rule whose filter or regular expression does not compile is left out
/// (the viewer checks them before sending, so this is a hostile or newer
/// viewer's doing).
struct RuleSet: @unchecked Sendable {
    // NSRegularExpression is immutable and thread-safe, but not marked Sendable on Linux.
    private struct Compiled {
        var rule: TrafficRule
        var filter: FilterExpression?
        var regex: NSRegularExpression?
        var template: String
    }

    private let rules: [Compiled]

    static let empty = RuleSet(compiling: [])

    var isEmpty: Bool { rules.isEmpty }
    var count: Int { rules.count }

    init(compiling rules: [TrafficRule]) {
        self.rules = rules.compactMap { rule in
            var filter: FilterExpression?
            if let text = rule.filter {
                guard let parsed = try? FilterExpression.parse(text) else { return nil }
                filter = parsed
            }
            var regex: NSRegularExpression?
            if rule.kind != .modifyHeaders {
                guard let compiled = try? NSRegularExpression(pattern: rule.pattern, options: [.caseInsensitive]) else { return nil }
                regex = compiled
            }
            return Compiled(rule: rule, filter: filter, regex: regex, template: Self.template(fromReplacement: rule.replacement))
        }
    }

    /// What the rules make of a request.
    enum Outcome {
        /// No rule matched.
        case unchanged
        /// Send this request instead.
        case send(URLRequest, FlowChanges)
        /// Answer with this, without the network.
        case answer(HTTPURLResponse, Data, FlowChanges)
    }

    func apply(to original: URLRequest) -> Outcome {
        guard !rules.isEmpty, let originalURL = original.url else { return .unchanged }
        var request = original
        var applied: [String] = []
        for compiled in rules where matches(compiled, request) {
            let rule = compiled.rule
            switch rule.kind {
            case .modifyHeaders:
                request.setValue(rule.replacement.isEmpty ? nil : rule.replacement, forHTTPHeaderField: rule.pattern)
                applied.append(rule.description)
            case .mapRemote:
                guard let regex = compiled.regex, let url = request.url?.absoluteString else { continue }
                let range = NSRange(url.startIndex..., in: url)
                guard regex.firstMatch(in: url, range: range) != nil else { continue }
                let mapped = regex.stringByReplacingMatches(in: url, range: range, withTemplate: compiled.template)
                guard let target = URL(string: mapped), target.scheme != nil, target.host != nil else { continue }
                request.url = target
                applied.append(rule.description)
            case .mapLocal:
                guard let regex = compiled.regex, let url = request.url?.absoluteString,
                      let match = regex.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)),
                      let end = Range(match.range, in: url)?.upperBound
                else { continue }
                applied.append(rule.description)
                let changes = changes(applied, original, request, originalURL, mockedFrom: rule.replacement)
                let (status, type, body) = Self.localAnswer(rule, rest: String(url[end...]))
                let response = HTTPURLResponse(
                    url: request.url ?? originalURL, statusCode: status, httpVersion: "HTTP/1.1",
                    headerFields: ["Content-Type": type, "Content-Length": String(body.count)]
                )
                guard let response else { continue }
                return .answer(response, body, changes)
            }
        }
        guard !applied.isEmpty else { return .unchanged }
        return .send(request, changes(applied, original, request, originalURL, mockedFrom: nil))
    }

    private func matches(_ compiled: Compiled, _ request: URLRequest) -> Bool {
        if let regex = compiled.regex, compiled.rule.kind != .modifyHeaders {
            guard let url = request.url?.absoluteString,
                  regex.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)) != nil else { return false }
        }
        guard let filter = compiled.filter else { return true }
        return filter.matches(Self.pendingLog(request))
    }

    private func changes(_ applied: [String], _ original: URLRequest, _ request: URLRequest, _ originalURL: URL, mockedFrom: String?) -> FlowChanges {
        let originalHeaders = Self.sortedFields(original.allHTTPHeaderFields ?? [:])
        let headers = Self.sortedFields(request.allHTTPHeaderFields ?? [:])
        return FlowChanges(
            rules: applied,
            originalURL: request.url == originalURL ? nil : originalURL.absoluteString,
            originalHeaders: headers == originalHeaders ? nil : originalHeaders,
            mockedFrom: mockedFrom
        )
    }

    private static func sortedFields(_ fields: [String: String]) -> [HTTPHeader] {
        fields.map { HTTPHeader(name: $0.key, value: $0.value) }.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// The request as the filter language sees a flow that has not been sent.
    private static func pendingLog(_ request: URLRequest) -> NetworkLog {
        NetworkLog(
            request: Request(
                method: request.httpMethod ?? "GET",
                url: request.url?.absoluteString ?? "",
                headers: sortedFields(request.allHTTPHeaderFields ?? [:]),
                body: request.httpBody.map { CapturedBody(data: $0) }
            ),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 0))
        )
    }

    /// A map-local rule's answer: its one file, or the file at the rest of
    /// the URL's path under its directory (`index.html` for none), else 404.
    static func localAnswer(_ rule: TrafficRule, rest: String) -> (status: Int, contentType: String, body: Data) {
        if rule.files.count == 1, rule.files[0].path.isEmpty {
            return (200, rule.files[0].contentType, rule.files[0].data)
        }
        let path = String(rest.prefix { $0 != "?" && $0 != "#" })
        var relative = (path.removingPercentEncoding ?? path).drop { $0 == "/" }
        if relative.isEmpty || relative.hasSuffix("/") { relative += "index.html" }
        if let file = rule.files.first(where: { $0.path == relative }) {
            return (200, file.contentType, file.data)
        }
        return (404, "text/plain; charset=utf-8", Data("netinspect map-local: no file '\(relative)' under \(rule.replacement)\n".utf8))
    }

    /// mitmproxy's replacements are Python's: `\1` is a group. Foundation's
    /// templates use `$1`, and a literal `$` must be escaped.
    static func template(fromReplacement replacement: String) -> String {
        var template = ""
        var characters = replacement.makeIterator()
        while let character = characters.next() {
            switch character {
            case "$": template += "\\$"
            case "\\":
                guard let next = characters.next() else { template += "\\\\"; break }
                if next.isNumber { template += "$\(next)" } else { template += "\\\(next)" }
            default: template.append(character)
            }
        }
        return template
    }
}

/// The rules in force: those of the viewer connected now, none otherwise.
final class RuleStore: Sendable {
    private let current = Locked(RuleSet.empty)

    /// The rules in force now.
    var rules: RuleSet { current.current }

    /// Replaces the rules (the viewer sent new ones, or went away: `[]`).
    func replace(with rules: [TrafficRule]) {
        let compiled = RuleSet(compiling: rules)
        current.withLock { $0 = compiled }
    }
}
