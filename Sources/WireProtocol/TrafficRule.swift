import Foundation

/// A rule a viewer asks an agent to apply to the app's traffic, in
/// mitmproxy's option syntax: the first character is the separator, then an
/// optional flow filter, then two parts.
///
/// | kind | syntax | what it does |
/// |---|---|---|
/// | ``Kind/mapRemote`` | `[\|FILTER]\|URL-REGEX\|REPLACEMENT` | sends the request to the URL the regex substitution makes |
/// | ``Kind/mapLocal`` | `[\|FILTER]\|URL-REGEX\|PATH` | answers from a file (or a directory's files) with no network |
/// | ``Kind/modifyHeaders`` | `[/FILTER]/NAME/VALUE` | sets a request header; an empty value removes it |
/// | ``Kind/condition`` | `\|[FILTER]\|SPEC` | slows, paces or fails the flow (``NetworkCondition``) |
///
/// ```swift
/// let rule = try TrafficRule(.mapRemote, spec: "|api.example.com|127.0.0.1:8080")
/// // rule.pattern == "api.example.com", rule.replacement == "127.0.0.1:8080", rule.filter == nil
/// ```
///
/// The filter and the regular expression are checked by whoever compiles the
/// rule (the viewer before sending, the agent before applying); this type
/// only carries them. A map-local rule carries the files themselves
/// (``files``): the agent never opens a path a viewer names.
public struct TrafficRule: Sendable, Equatable {
    /// What a rule does.
    public enum Kind: String, Sendable, CaseIterable {
        /// Send matching requests elsewhere.
        case mapRemote = "map-remote"
        /// Answer matching requests from local files.
        case mapLocal = "map-local"
        /// Set or remove a request header.
        case modifyHeaders = "modify-headers"
        /// Put a network condition on matching flows: latency, bandwidth, failures.
        case condition
    }

    /// What the rule does.
    public var kind: Kind
    /// A flow filter (the inspector's filter language) the request must match; nil matches all.
    public var filter: String?
    /// A regular expression over the URL (map remote and map local), the
    /// header name, or a condition's ``NetworkCondition`` text.
    public var pattern: String
    /// The replacement URL text, the local path the files came from, or the header value.
    public var replacement: String
    /// Map local only: the files to answer with.
    public var files: [LocalFile]

    /// A file a map-local rule answers with.
    public struct LocalFile: Sendable, Equatable {
        /// Path relative to the rule's directory, with `/` separators; empty
        /// when the rule maps a single file.
        public var path: String
        /// The `Content-Type` to answer with.
        public var contentType: String
        /// The file's bytes.
        public var data: Data

        /// Creates a local file record.
        public init(path: String, contentType: String, data: Data) {
            self.path = path
            self.contentType = contentType
            self.data = data
        }
    }

    /// Creates a rule from its parts.
    public init(kind: Kind, filter: String? = nil, pattern: String, replacement: String, files: [LocalFile] = []) {
        self.kind = kind
        self.filter = filter
        self.pattern = pattern
        self.replacement = replacement
        self.files = files
    }

    /// Why a rule's text could not be read.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A sentence a person can act on.
        public var description: String
    }

    /// Reads mitmproxy's syntax: `SEP[FILTER SEP]FIRST SEP SECOND`, where
    /// SEP is the first character.
    /// - Throws: ``SyntaxError`` naming what is missing.
    public init(_ kind: Kind, spec: String) throws(SyntaxError) {
        guard let separator = spec.first else {
            throw SyntaxError(description: "\(kind.rawValue): empty rule; expected e.g. \(Self.example(kind))")
        }
        guard !separator.isLetter, !separator.isNumber, !separator.isWhitespace else {
            throw SyntaxError(description: "\(kind.rawValue) '\(spec)': the first character is the separator and must be a symbol such as '|' or '/'; expected e.g. \(Self.example(kind))")
        }
        let parts = spec.dropFirst().split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        if kind == .condition {
            try self.init(condition: spec, parts: parts, separator: separator)
            return
        }
        let filter: String?
        let first: String
        let second: String
        switch parts.count {
        case 2: (filter, first, second) = (nil, parts[0], parts[1])
        case 3: (filter, first, second) = (parts[0], parts[1], parts[2])
        default:
            throw SyntaxError(description: "\(kind.rawValue) '\(spec)': expected 2 or 3 parts separated by '\(separator)', found \(parts.count); e.g. \(Self.example(kind))")
        }
        guard !first.isEmpty else {
            throw SyntaxError(description: "\(kind.rawValue) '\(spec)': the \(kind == .modifyHeaders ? "header name" : "URL pattern") is empty")
        }
        if kind != .modifyHeaders, second.isEmpty {
            throw SyntaxError(description: "\(kind.rawValue) '\(spec)': the \(kind == .mapLocal ? "path" : "replacement") is empty")
        }
        self.init(kind: kind, filter: filter.flatMap { $0.isEmpty ? nil : $0 }, pattern: first, replacement: second)
    }

    /// The rule as mitmproxy's option text, e.g. `|~m GET|api.example.com|127.0.0.1:8080`,
    /// which ``init(kind:spec:)`` reads back: the separator is one that no
    /// part contains (`|~u :8000/|X-Env|staging`, not `/~u :8000//X-Env/staging`).
    public var spec: String {
        let parts = kind == .condition ? [filter ?? "", pattern] : [filter, pattern, replacement].compactMap { $0 }
        let preferred: [Character] = kind == .modifyHeaders ? ["/", "|"] : ["|", "/"]
        let separator = (preferred + ["#", "!", "@", ";", ",", "^", "%", "`", "'", "\""])
            .first { candidate in !parts.contains { $0.contains(candidate) } } ?? preferred[0]
        return String(separator) + parts.joined(separator: String(separator))
    }

    /// The rule with its kind, e.g. `map-remote |api.example.com|127.0.0.1:8080`.
    public var description: String { "\(kind.rawValue) \(spec)" }

    static func example(_ kind: Kind) -> String {
        switch kind {
        case .mapRemote: "'|api.example.com|127.0.0.1:8080'"
        case .mapLocal: "'|example.com/static|./static'"
        case .modifyHeaders: "'/~d example.com/X-Env/staging'"
        case .condition: "'|~d api.example.com|latency=300ms' or '||3g'"
        }
    }
}

/// What rules did to a flow, so the viewer can show it and nobody mistakes
/// a mapped or mocked exchange for the app's own.
///
/// ```swift
/// let changes = FlowChanges(rules: ["map-remote |api.example.com|127.0.0.1:8080"],
///                           originalURL: "https://api.example.com/v1/items")
/// ```
public struct FlowChanges: Sendable, Equatable {
    /// The rules applied, as ``TrafficRule/description`` texts, in order.
    public var rules: [String]
    /// The URL the app asked for, when a rule sent the request elsewhere
    /// (the flow's `request.url` is where it went).
    public var originalURL: String?
    /// The app's own header fields, when a rule changed them (the flow's
    /// `request.headers` are the ones sent).
    public var originalHeaders: [HTTPHeader]?
    /// Answered from this local file, with no network.
    public var mockedFrom: String?
    /// A person asked for this request again, from this flow.
    public var replayOf: FlowID?
    /// What a person edited at a breakpoint (or before a replay): the
    /// request, the response, or both. Nil when nobody edited the flow.
    public var edited: [HoldPhase]?
    /// The response as the server sent it, when a person edited it at a
    /// breakpoint (the flow's `response` is what the app got).
    public var originalResponse: Response?
    /// The app's own method, when a person's edit changed it.
    public var originalMethod: String?
    /// The app's own request body (empty when it had none), when a person's
    /// edit changed the body; kept up to the agent's hold limit.
    public var originalBody: CapturedBody?
    /// Answered by server replay (a recorded response, or what the
    /// replay does to a request it has none for), with no network.
    public var serverReplay: ServerReplayMark?
    /// A person wrote this request in the viewer (compose); the app's agent
    /// or the viewer's own client sent it. True or absent.
    public var composed: Bool?
    /// What a `condition` rule did: the latency added, the pace, the failure.
    public var condition: AppliedCondition?

    /// Creates a change record.
    public init(rules: [String], originalURL: String? = nil, originalHeaders: [HTTPHeader]? = nil, mockedFrom: String? = nil,
                replayOf: FlowID? = nil, edited: [HoldPhase]? = nil, originalResponse: Response? = nil,
                originalMethod: String? = nil, originalBody: CapturedBody? = nil, serverReplay: ServerReplayMark? = nil,
                composed: Bool? = nil, condition: AppliedCondition? = nil) {
        self.rules = rules
        self.originalURL = originalURL
        self.originalHeaders = originalHeaders
        self.mockedFrom = mockedFrom
        self.replayOf = replayOf
        self.edited = edited
        self.originalResponse = originalResponse
        self.originalMethod = originalMethod
        self.originalBody = originalBody
        self.serverReplay = serverReplay
        self.composed = composed
        self.condition = condition
    }
}
