import WireProtocol

/// A parsed flow filter in mitmproxy's style, ready to be matched against
/// many flows: every regular expression is compiled once, by ``parse(_:)``.
///
/// The language:
///
/// | Syntax            | Matches a flow whose…                                              |
/// |-------------------|--------------------------------------------------------------------|
/// | `~m METHOD`       | request method is METHOD (any case)                                |
/// | `~c 404`, `~c 4xx`| response status is 404, or in the 400s                             |
/// | `~d DOMAIN`       | URL host contains DOMAIN (so `~d example.com` takes subdomains)    |
/// | `~d DOMAIN:PORT`  | the same, on that port (`~d 127.0.0.1:8000`, `~d [::1]:8080`; a URL without one has its scheme's) |
/// | `~u REGEX`        | URL matches REGEX                                                  |
/// | `~h REGEX`        | a request or response header line `Name: value` matches            |
/// | `~hq`, `~hs`      | the same, request headers only / response headers only             |
/// | `~b REGEX`        | request or response body text, or a WebSocket or gRPC message sent or received, matches (`~bq`, `~bs` for one side) |
/// | `~t REGEX`        | request or response content type matches                           |
/// | `~e`              | exchange failed or was cancelled, or carries an error               |
/// | `~p`              | exchange is not finished yet                                        |
/// | `~marked`         | flow is marked (`M`)                                                |
/// | `~comment REGEX`  | the flow's comment (`#`) matches                                    |
/// | `~inbound`, `~outbound` | the app received the request / sent it                     |
/// | `~parent X`       | was made while the app handled an inbound flow matching X, or was received from a captured call matching X |
/// | `~id PREFIX`      | flow id starts with PREFIX (so `~parent ~id 3F2A` is 3F2A…'s children) |
/// | `~app REGEX`      | the app it came from (its agent's name; over OTLP, the service) matches |
/// | `~pid 4242`       | the process it came from has this id                               |
/// | `~grpc`, `~grpc REGEX` | flow is a gRPC call; with REGEX, its `service/method` matches  |
/// | `~gs NOT_FOUND`, `~gs 5` | gRPC call ended with this status (name, either case, or code) |
/// | `~websocket`      | flow is a WebSocket                                                |
/// | `~stream`         | flow streams: a WebSocket, server-sent events, a body that came in parts, a streaming gRPC call |
/// | `~replay`         | flow is a replay: sent again (`~replayq`, client replay) or answered from a recording (`~replays`, server replay) |
/// | `!x`, `x & y`, `x y`, `x \| y`, `( … )` | not, and (also by juxtaposition), or, grouping |
/// | `word`, `"a b"`   | a bare or quoted word alone is a URL match, like `~u`              |
///
/// Precedence is `!` over `&` over `|`. Regular expressions are
/// case-insensitive. Arguments stop at white space, `(`, `)`, `&` and `|`;
/// quote them (`"…"` or `'…'`, with `\"` and `\\` as escapes) to include those.
///
/// ```swift
/// let filter = try FilterExpression.parse("~d api.example.com & !~c 2xx")
/// let failures = flows.filter(filter.matches)
/// ```
package indirect enum FilterExpression: Sendable, Equatable {
    /// Every flow; what an empty expression parses to.
    case all
    /// `~m`: the request method, compared case-insensitively. Stored upper-cased.
    case method(String)
    /// `~c 404`: an exact response status code.
    case statusCode(Int)
    /// `~c 4xx`: a class of response status codes, `4` for 400...499.
    case statusClass(Int)
    /// `~d`: the URL's host contains this text (case-insensitive); with a
    /// port (`~d example.com:443`), the URL's port, or its scheme's default, is that one.
    case domain(FilterPattern, port: Int?)
    /// `~u` or a bare word: the URL matches.
    case url(FilterPattern)
    /// `~h`, `~hq`, `~hs`: some header line `Name: value` matches.
    case header(FilterPattern, in: FilterMessageSide)
    /// `~b`, `~bq`, `~bs`: the captured body, or a WebSocket or gRPC
    /// message that went that way, read as UTF-8 text, matches.
    case body(FilterPattern, in: FilterMessageSide)
    /// `~t`: a content type (response MIME type or a `Content-Type` header) matches.
    case contentType(FilterPattern)
    /// `~e`: the flow failed, was cancelled or carries an error.
    case error
    /// `~p`: the flow has not reached a final state.
    case pending
    /// `~s`: the flow has a response (mitmproxy's "match response"); `~q`,
    /// a request with no response, is its negation. Breakpoint filters use
    /// them to hold only requests or only responses.
    case hasResponse
    /// `~marked`: the person marked the flow in the inspector (never true elsewhere).
    case marked
    /// `~comment`: the comment the person gave the flow in the inspector matches.
    case comment(FilterPattern)
    /// `~inbound`, `~outbound`: which way the flow went through the app
    /// (a flow without a direction is outbound, as agents write it).
    case direction(FlowDirection)
    /// `~parent X`: the flow has a parent and that parent, looked up where
    /// the flows are kept, matches X. A call's parent is the inbound flow
    /// the app was handling when it made it; an inbound flow's, the captured
    /// call (of another service, or the same) that it received. The operand is one term: `~parent ~u /checkout`,
    /// `~parent (~m POST & ~u /checkout)`.
    case parent(FilterExpression)
    /// `~id PREFIX`: the flow's id starts with PREFIX (case-insensitive), as
    /// the detail view shows it. Stored upper-cased.
    case flowID(String)
    /// `~app REGEX`: the name of the app the flow came from (its agent's
    /// hello; for spans over OTLP, the service) matches. Only the inspector
    /// knows it (``FlowOrigin``): false in the agent and in a file's flows.
    case app(FilterPattern)
    /// `~pid 4242`: the process the flow came from has this id; tells two
    /// instances of one app apart. Inspector-side, like ``app(_:)``.
    case processID(Int)
    /// `~grpc`: the flow is a gRPC call; with a pattern (`~grpc echo.Echo`,
    /// `~grpc 'Echo/(Get|Put)$'`), its `service/method` matches it.
    case grpc(FilterPattern?)
    /// `~gs NOT_FOUND`, `~gs 5`: the flow is a gRPC call that ended with this
    /// status code (a call still running has none).
    case grpcStatus(Int)
    /// `~websocket` (as in mitmproxy): the flow is a WebSocket.
    case webSocket
    /// `~stream`: the flow streams: a WebSocket, a `text/event-stream`
    /// response, a body that arrived in parts, or a gRPC call that streams.
    case stream
    /// `~replay`, `~replayq`, `~replays` (as in mitmproxy): the flow was
    /// replayed, by netinspect or the app's agent sending it again (client)
    /// or by server replay answering it from a recording (server).
    case replay(FilterReplayKind)
    /// The `/` quick search: a case-insensitive substring of the URL, the
    /// method, the status code or a gRPC status name.
    case text(FilterPattern)
    /// `!`: the operand does not match.
    case not(FilterExpression)
    /// `&` or juxtaposition: both match.
    case and(FilterExpression, FilterExpression)
    /// `|`: either matches.
    case or(FilterExpression, FilterExpression)
}

/// Which replays `~replay` (either), `~replayq` and `~replays` select.
package enum FilterReplayKind: Sendable, Equatable {
    case either
    /// Sent again at a person's request (`r`, `:replay.client`).
    case client
    /// Answered from a recording (`--server-replay`).
    case server
}

/// Which half of an exchange a header or body filter looks at.
package enum FilterMessageSide: Sendable, Equatable {
    /// The request only (`~hq`, `~bq`).
    case request
    /// The response only (`~hs`, `~bs`).
    case response
    /// Either (`~h`, `~b`).
    case both
}

/// Why a filter expression could not be parsed, and where.
package struct FilterParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, e.g. `expected ')'`.
    package var message: String
    /// The offset, in characters from the start of the input, at which parsing failed.
    package var offset: Int

    /// Creates an error.
    package init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// The message and the 1-based column, e.g. `expected ')' at column 12`.
    package var description: String { "\(message) at column \(offset + 1)" }
}

extension FilterExpression {
    /// Parses a filter expression (syntax in ``FilterExpression``).
    ///
    /// An empty or blank text is ``all``.
    /// - Throws: ``FilterParseError`` naming the first problem and its offset.
    package static func parse(_ text: String) throws(FilterParseError) -> FilterExpression {
        var parser = FilterParser(text)
        return try parser.parseAll()
    }

    /// The `/` quick search: a case-insensitive substring of the URL (which
    /// holds the host), the method, the status code or a gRPC status name.
    /// Blank text is ``all``.
    package static func freeText(_ text: String) -> FilterExpression {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return .all }
        return .text(FilterPattern(literal: trimmed))
    }
}

extension FilterExpression {
    /// One line per construct of the language, for help screens and for the
    /// hint under an invalid expression.
    package static let syntaxSummary: [(syntax: String, meaning: String)] = [
        ("~m METHOD", "request method"),
        ("~c 404, ~c 4xx", "status code, or class of codes"),
        ("~d DOMAIN[:PORT]", "host contains; with :PORT, on that port (~d 127.0.0.1:8000)"),
        ("~u REGEX", "URL matches (a bare word does too)"),
        ("~h, ~hq, ~hs REGEX", "header line 'Name: value' (request, response)"),
        ("~b, ~bq, ~bs REGEX", "body text or a message's (request, response)"),
        ("~t REGEX", "content type"),
        ("~e", "failed, cancelled or errored"),
        ("~p", "not finished yet"),
        ("~q, ~s", "no response yet; has a response (breakpoints: requests, responses)"),
        ("~marked", "marked (M)"),
        ("~comment REGEX", "the flow's comment (#)"),
        ("~inbound, ~outbound", "received by the app; sent by it"),
        ("~parent X", "made while handling an inbound flow matching X; received from a call matching X"),
        ("~id PREFIX", "flow id starts with PREFIX (~parent ~id P: P's children)"),
        ("~app REGEX", "the app it came from (agent's app name; OTLP service)"),
        ("~pid PID", "the process it came from"),
        ("~grpc [REGEX]", "gRPC calls; with REGEX, whose service/method matches"),
        ("~gs NAME|CODE", "gRPC calls that ended with this status: ~gs NOT_FOUND, ~gs 5"),
        ("~websocket", "WebSockets"),
        ("~stream", "streams: WebSockets, server-sent events, bodies in parts, streaming gRPC"),
        ("~replay, ~replayq, ~replays", "replayed: either way; sent again (client); answered from a recording (server)"),
        ("! & | ( )", "not, and (also a space), or, grouping"),
        ("\"a b\"", "quoted argument; \\\" and \\\\ escape"),
    ]
}

extension String {
    /// The string without leading and trailing white space.
    func trimmingSpaces() -> String {
        let characters = Substring(self).drop(while: \.isWhitespace)
        return String(characters.reversed().drop(while: \.isWhitespace).reversed())
    }
}
