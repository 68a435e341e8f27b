import FlowFilter
import Foundation
import WireProtocol

/// The traffic rules the connected viewer pushed, compiled for matching.
///
/// Rules apply in order: header rules and map-remote rules change the
/// request cumulatively; the first map-local rule that matches answers it;
/// the first condition rule that matches slows or fails it (``condition(for:)``).
/// A rule whose filter or regular expression does not compile is left out
/// (the viewer checks them before sending, so this is a hostile or newer
/// viewer's doing).
package struct RuleSet: @unchecked Sendable {
    // NSRegularExpression is immutable and thread-safe, but not marked Sendable on Linux.
    private struct Compiled {
        var rule: TrafficRule
        var filter: FilterExpression?
        /// Whether the URL matches: the filter language's matcher, which
        /// scans bytes for literal and simple patterns and only falls back
        /// to the regex engine for the rest (most rules never match most
        /// requests, so this is the hot path).
        var urlPattern: FilterPattern?
        /// The same expression, for the substitution once it matched.
        var regex: NSRegularExpression?
        var template: String
        /// A condition rule's condition and draws.
        var condition: ConditionMatch?
    }

    private let rules: [Compiled]

    package static let empty = RuleSet(compiling: [])

    package var isEmpty: Bool { rules.isEmpty }
    package var count: Int { rules.count }

    private init(compiled: [Compiled]) {
        rules = compiled
    }

    /// These rules less those of `kind`: what applies to traffic that
    /// cannot have that kind of change (a service's inbound requests have
    /// no remote to map).
    package func excluding(_ kind: TrafficRule.Kind) -> RuleSet {
        RuleSet(compiled: rules.filter { $0.rule.kind != kind })
    }

    package init(compiling rules: [TrafficRule]) {
        self.rules = rules.compactMap { rule in
            var filter: FilterExpression?
            if let text = rule.filter {
                guard let parsed = try? FilterExpression.parse(text) else { return nil }
                filter = parsed
            }
            var regex: NSRegularExpression?
            var urlPattern: FilterPattern?
            if rule.kind == .condition {
                guard let condition = try? NetworkCondition(spec: rule.pattern) else { return nil }
                let match = ConditionMatch(rule: rule, condition: condition, draws: ConditionDraws(seed: condition.seed))
                return Compiled(rule: rule, filter: filter, template: "", condition: match)
            }
            if rule.kind != .modifyHeaders {
                guard let compiled = try? NSRegularExpression(pattern: rule.pattern, options: [.caseInsensitive]),
                      let pattern = try? FilterPattern(regularExpression: rule.pattern)
                else { return nil }
                regex = compiled
                urlPattern = pattern
            }
            return Compiled(rule: rule, filter: filter, urlPattern: urlPattern, regex: regex,
                            template: Self.template(fromReplacement: rule.replacement))
        }
    }

    /// What the rules make of a request.
    package enum Outcome: Sendable, Equatable {
        /// No rule matched.
        case unchanged
        /// Send this request instead.
        case send(ExchangeRequest, FlowChanges)
        /// Answer `request` (as the rules left it) with this, without the network.
        case answer(ExchangeResponse, request: ExchangeRequest, FlowChanges)
    }

    /// What the rules make of `original`: pure, so every adapter gets the
    /// same answer for the same request.
    ///
    /// ```swift
    /// if case .send(let changed, let changes) = agent.rules.rules.apply(to: request) { … }
    /// ```
    package func apply(to original: ExchangeRequest) -> Outcome {
        guard !rules.isEmpty else { return .unchanged }
        var request = original
        var applied: [String] = []
        // What the filters see, made once and again only after a rule changed the request.
        var log: NetworkLog?
        var urlText = original.url.absoluteString
        for compiled in rules where compiled.condition == nil {
            if let pattern = compiled.urlPattern, !pattern.matches(urlText) { continue }
            if let filter = compiled.filter {
                if log == nil { log = request.pendingLog }
                guard let log, filter.matches(log) else { continue }
            }
            let rule = compiled.rule
            switch rule.kind {
            case .modifyHeaders:
                request.headers.set(rule.pattern, to: rule.replacement.isEmpty ? nil : rule.replacement)
                applied.append(rule.description)
                log = nil
            case .mapRemote:
                guard let regex = compiled.regex else { continue }
                let mapped = regex.stringByReplacingMatches(in: urlText, range: NSRange(urlText.startIndex..., in: urlText),
                                                            withTemplate: compiled.template)
                guard mapped != urlText, let target = URL(string: mapped), target.scheme != nil, target.host != nil else { continue }
                request.url = target
                urlText = target.absoluteString
                applied.append(rule.description)
                log = nil
            case .condition:
                continue
            case .mapLocal:
                guard let regex = compiled.regex,
                      let match = regex.firstMatch(in: urlText, range: NSRange(urlText.startIndex..., in: urlText)),
                      let end = Range(match.range, in: urlText)?.upperBound
                else { continue }
                applied.append(rule.description)
                let (status, type, body) = Self.localAnswer(rule, rest: String(urlText[end...]))
                let response = ExchangeResponse(statusCode: status, headers: [
                    HTTPHeader(name: "Content-Type", value: type), HTTPHeader(name: "Content-Length", value: String(body.count)),
                ], body: body)
                return .answer(response, request: request, changes(applied, original, request, mockedFrom: rule.replacement))
            }
        }
        guard !applied.isEmpty else { return .unchanged }
        return .send(request, changes(applied, original, request, mockedFrom: nil))
    }

    /// The first condition rule whose filter `request` matches (an empty
    /// filter matches every request).
    package func condition(for request: ExchangeRequest) -> ConditionMatch? {
        var log: NetworkLog?
        for compiled in rules {
            guard let match = compiled.condition else { continue }
            if let filter = compiled.filter {
                if log == nil { log = request.pendingLog }
                guard let log, filter.matches(log) else { continue }
            }
            return match
        }
        return nil
    }

    private func changes(_ applied: [String], _ original: ExchangeRequest, _ request: ExchangeRequest, mockedFrom: String?) -> FlowChanges {
        let originalHeaders = original.sortedHeaders
        return FlowChanges(
            rules: applied,
            originalURL: request.url == original.url ? nil : original.url.absoluteString,
            originalHeaders: request.sortedHeaders == originalHeaders ? nil : originalHeaders,
            mockedFrom: mockedFrom
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
package final class RuleStore: Sendable {
    private let current = Locked(RuleSet.empty)

    package init() {}

    /// The rules in force now.
    package var rules: RuleSet { current.current }

    /// Replaces the rules (the viewer sent new ones, or went away: `[]`).
    package func replace(with rules: [TrafficRule]) {
        let compiled = RuleSet(compiling: rules)
        current.withLock { $0 = compiled }
    }
}
