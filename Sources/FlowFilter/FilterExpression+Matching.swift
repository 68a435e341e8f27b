import Foundation
import WireProtocol

extension FilterExpression {
    /// A flow's parent where the flows are kept, with the app it came from
    /// (see ``FilterExpression/parent(_:)``).
    package typealias ParentLookup = (NetworkLog) -> (log: NetworkLog, origin: FlowOrigin?)?

    /// Whether `log` passes the filter. `~marked` and `~comment` read
    /// `marked` and `comment`, and `~app` and `~pid` read `origin`, which
    /// only the inspector knows (the person adds the first two there; the
    /// agent's hello says the others); elsewhere they are false and nil.
    /// `~parent` asks `parent` for the flow's parent; where no flows are
    /// kept (the agent, a dump), it finds none and `~parent` is false.
    ///
    /// ```swift
    /// let children = try FilterExpression.parse("~parent ~u /checkout")
    /// children.matches(call, origin: app, parent: { store.parent(of: $0) })
    /// ```
    ///
    /// Cheap enough to run over the whole store on every keystroke: nothing is
    /// decoded or allocated unless a regular expression needs a `String`,
    /// bodies are read only by `~b`, and the origin is looked up only by
    /// `~app` and `~pid` (the lookup and its strings' retains slowed every
    /// other filter; docs/BENCHMARKS.md, "Costs behind the code").
    package func matches(
        _ log: NetworkLog, marked: Bool = false, comment: String? = nil,
        origin: @autoclosure () -> FlowOrigin? = nil, parent: ParentLookup = { _ in nil }
    ) -> Bool {
        switch self {
        case .all:
            return true
        case .method(let method):
            return equalsIgnoringASCIICase(log.request.method, method)
        case .statusCode(let code):
            return log.response?.statusCode == code
        case .statusClass(let digit):
            guard let code = log.response?.statusCode else { return false }
            return code / 100 == digit
        case let .domain(pattern, port):
            return Self.domainMatches(log.request.url, pattern, port: port)
        case .url(let pattern):
            return Self.urlMatches(log.request.url, pattern)
        case let .header(pattern, side):
            return Self.anyHeader(of: log, side) { Self.headerLine(name: $0, value: $1, matches: pattern) }
        case let .body(pattern, side):
            return Self.anyBody(of: log, side) { body in
                pattern.matches(utf8: body.data) || Self.decodedFormBody(body).map(pattern.matches) == true
            }
        case .contentType(let pattern):
            if let mime = log.response?.mimeType, pattern.matches(mime) { return true }
            return Self.anyHeader(of: log, .both) { name, value in
                equalsIgnoringASCIICase(name, "Content-Type") && pattern.matches(value)
            }
        case .error:
            switch log.state {
            case .failed, .cancelled: return true
            case .pending, .responded, .completed: return log.error != nil
            }
        case .pending:
            return !log.state.isFinal
        case .hasResponse:
            return log.response != nil
        case .marked:
            return marked
        case .comment(let pattern):
            return comment.map(pattern.matches) ?? false
        case .direction(let direction):
            return (log.direction ?? .outbound) == direction
        case .parent(let inner):
            // The parent's own marks are not at hand here, so ~marked inside is false.
            guard let found = parent(log), found.log.id != log.id else { return false }
            return inner.matches(found.log, origin: found.origin, parent: parent)
        case .app(let pattern):
            return origin().map { pattern.matches($0.app) } ?? false
        case .processID(let pid):
            return origin()?.processID == pid
        case .flowID(let prefix):
            return log.id.description.hasPrefix(prefix)
        case .grpc(let pattern):
            guard let call = log.grpc else { return false }
            return pattern.map { $0.matches(call.service + "/" + call.method) } ?? true
        case .grpcStatus(let code):
            return log.grpc?.status?.code == code
        case .webSocket:
            return log.webSocket != nil
        case .stream:
            return Self.isStream(log)
        case .replay(let kind):
            let client = log.changes?.replayOf != nil
            let server = log.changes?.serverReplay != nil
            switch kind {
            case .either: return client || server
            case .client: return client
            case .server: return server
            }
        case .text(let pattern):
            if Self.urlMatches(log.request.url, pattern) || pattern.matches(log.request.method) { return true }
            if let status = log.grpc?.status, pattern.matches(status.name) { return true }
            guard let code = log.response?.statusCode else { return false }
            return pattern.matches(String(code))
        case .not(let inner):
            return !inner.matches(log, marked: marked, comment: comment, origin: origin(), parent: parent)
        case let .and(left, right):
            return left.matches(log, marked: marked, comment: comment, origin: origin(), parent: parent)
                && right.matches(log, marked: marked, comment: comment, origin: origin(), parent: parent)
        case let .or(left, right):
            return left.matches(log, marked: marked, comment: comment, origin: origin(), parent: parent)
                || right.matches(log, marked: marked, comment: comment, origin: origin(), parent: parent)
        }
    }

    /// Whether the answer depends on another flow (`~parent`), so it can
    /// change when that flow arrives or changes, not only this one.
    ///
    /// ```swift
    /// try FilterExpression.parse("~c 5xx & !~parent ~inbound").looksAtParent   // true
    /// ```
    package var looksAtParent: Bool {
        switch self {
        case .parent: true
        case .not(let inner): inner.looksAtParent
        case let .and(left, right), let .or(left, right): left.looksAtParent || right.looksAtParent
        default: false
        }
    }

    /// The URL as sent, else as the list shows it (decoded).
    private static func urlMatches(_ url: String, _ pattern: FilterPattern) -> Bool {
        pattern.matches(url) || DecodedText.url(url).map(pattern.matches) == true
    }

    /// A body that reads as form encoding (`a=1&b=caf%C3%A9`), decoded; nil
    /// for any other body, so JSON or binary bodies are read once, raw.
    private static func decodedFormBody(_ body: CapturedBody) -> String? {
        let percent = UInt8(ascii: "%"), plus = UInt8(ascii: "+"), equals = UInt8(ascii: "=")
        guard body.data.contains(equals), body.data.contains(where: { $0 == percent || $0 == plus }),
              let text = String(data: body.data, encoding: .utf8) else { return nil }
        return DecodedText.form(text)
    }

    private static func anyHeader(of log: NetworkLog, _ side: FilterMessageSide, _ predicate: (_ name: String, _ value: String) -> Bool) -> Bool {
        func any(_ headers: [HTTPHeader]) -> Bool {
            // Indexing, rather than contains(where:), spares copying each header.
            for index in headers.indices where predicate(headers[index].name, headers[index].value) { return true }
            return false
        }
        if side != .response, any(log.request.headers) || any(log.request.clientHeaders) { return true }
        guard side != .request, let headers = log.response?.headers else { return false }
        return any(headers)
    }

    /// The bodies, then each message that went that way (a WebSocket's, a
    /// gRPC call's): a server-sent event is part of its body already.
    private static func anyBody(of log: NetworkLog, _ side: FilterMessageSide, _ predicate: (CapturedBody) -> Bool) -> Bool {
        if side != .response, log.request.body.map(predicate) == true { return true }
        if side != .request, log.response?.body.map(predicate) == true { return true }
        func wanted(_ direction: StreamDirection) -> Bool {
            switch side {
            case .both: true
            case .request: direction == .request
            case .response: direction == .response
            }
        }
        if let messages = log.webSocket?.messages {
            for index in messages.indices where wanted(messages[index].direction) && predicate(messages[index].body) { return true }
        }
        if let messages = log.grpc?.messages {
            for index in messages.indices where wanted(messages[index].direction) && predicate(messages[index].body) { return true }
        }
        return false
    }

    /// A WebSocket, a body that came in parts, a `text/event-stream`
    /// response (which may have arrived too quickly to be sent in parts),
    /// or a gRPC call that streams either way.
    private static func isStream(_ log: NetworkLog) -> Bool {
        if log.webSocket != nil || log.parts?.marks.isEmpty == false { return true }
        if let kind = log.grpc?.kind, kind != .unary { return true }
        guard let response = log.response else { return false }
        return MediaType.essence(of: response.mimeType ?? response.headers.first("Content-Type")) == "text/event-stream"
    }

    /// Matches `Name: value` without building the line as a `String`: the
    /// pattern looks at the two halves when it can, else the line is put
    /// together in a stack buffer.
    private static func headerLine(name: String, value: String, matches pattern: FilterPattern) -> Bool {
        withUTF8(name) { name in
            withUTF8(value) { value in
                if let answer = pattern.matchesHeader(name: name, value: value) { return answer }
                return withUnsafeTemporaryAllocation(byteCount: name.count + 2 + value.count, alignment: 1) { line in
                    line.copyMemory(from: UnsafeRawBufferPointer(name))
                    line[name.count] = UInt8(ascii: ":")
                    line[name.count + 1] = UInt8(ascii: " ")
                    UnsafeMutableRawBufferPointer(rebasing: line[(name.count + 2)...]).copyMemory(from: UnsafeRawBufferPointer(value))
                    return pattern.matches(utf8: UnsafeBufferPointer(line.bindMemory(to: UInt8.self)))
                }
            }
        }
    }
}
