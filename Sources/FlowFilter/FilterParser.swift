import WireProtocol

/// Recursive descent over the filter language, one token of look-ahead.
///
/// ```
/// expression := conjunction ( "|" conjunction )*
/// conjunction := unary ( "&"? unary )*          juxtaposition is "and"
/// unary       := "!" unary | primary
/// primary     := "(" expression ")" | operator argument? | word
/// ```
///
/// Offsets are counted in characters, so an error under a UTF-8 argument
/// points at the column a person sees.
struct FilterParser {
    private let characters: [Character]
    private var position = 0
    private var lookahead: Token?
    private var depth = 0
    private var operandCount = 0

    /// Deeper nesting than this is refused rather than risking the stack.
    static let maximumDepth = 64
    /// More operands than this is refused for the same reason: `a b c …`
    /// builds a left-leaning tree as deep as it is long.
    static let maximumOperands = 512

    init(_ text: String) {
        characters = Array(text)
    }

    mutating func parseAll() throws(FilterParseError) -> FilterExpression {
        if try peek().kind == .end { return .all }
        let expression = try parseDisjunction()
        let rest = try peek()
        guard rest.kind == .end else {
            throw FilterParseError(message: "unexpected \(rest.kind.name)", offset: rest.offset)
        }
        return expression
    }

    // MARK: Grammar

    private mutating func parseDisjunction() throws(FilterParseError) -> FilterExpression {
        var expression = try parseConjunction()
        while try peek().kind == .or {
            try expectOperand(after: advance())
            expression = .or(expression, try parseConjunction())
        }
        return expression
    }

    private mutating func parseConjunction() throws(FilterParseError) -> FilterExpression {
        var expression = try parseUnary()
        while true {
            let next = try peek()
            if next.kind == .and {
                try expectOperand(after: advance())
            } else if !next.kind.startsOperand {
                return expression
            }
            expression = .and(expression, try parseUnary())
        }
    }

    private mutating func parseUnary() throws(FilterParseError) -> FilterExpression {
        let token = try peek()
        guard token.kind == .not else { return try parsePrimary() }
        try expectOperand(after: advance())
        return try nested(at: token.offset) { parser throws(FilterParseError) in .not(try parser.parseUnary()) }
    }

    private mutating func parsePrimary() throws(FilterParseError) -> FilterExpression {
        let token = try advance()
        operandCount += 1
        guard operandCount <= Self.maximumOperands else {
            throw FilterParseError(message: "too many terms (the limit is \(Self.maximumOperands))", offset: token.offset)
        }
        switch token.kind {
        case .open:
            try expectOperand(after: token)
            let inner = try nested(at: token.offset) { parser throws(FilterParseError) in try parser.parseDisjunction() }
            let close = try peek()
            guard close.kind == .close else {
                throw FilterParseError(message: "expected ')'", offset: close.offset)
            }
            _ = try advance()
            return inner
        case .word(let text):
            return .url(try regularExpression(text, at: token.offset))
        case .operator(let name):
            return try parseOperator(name, at: token.offset)
        case .close, .and, .or, .not, .end:
            throw FilterParseError(message: "expected a filter expression, found \(token.kind.name)", offset: token.offset)
        }
    }

    private mutating func parseOperator(_ name: String, at offset: Int) throws(FilterParseError) -> FilterExpression {
        switch name {
        case "e": return .error
        case "p": return .pending
        case "s": return .hasResponse
        case "q": return .not(.hasResponse)
        case "marked": return .marked
        case "inbound": return .direction(.inbound)
        case "outbound": return .direction(.outbound)
        case "id": return .flowID(try argument(for: name).text.uppercased())
        case "app": return .app(try regularExpressionArgument(for: name))
        case "pid": return try processFilter(try argument(for: name))
        case "parent":
            try expectOperand(after: Token(kind: .operator(name), offset: offset))
            return try nested(at: offset) { parser throws(FilterParseError) in .parent(try parser.parseUnary()) }
        case "grpc":
            // The pattern is optional: `~grpc` alone selects every call.
            guard case .word = try peek().kind else { return .grpc(nil) }
            return .grpc(try regularExpressionArgument(for: name))
        case "gs": return try grpcStatusFilter(try argument(for: name))
        case "websocket": return .webSocket
        case "stream": return .stream
        case "replay": return .replay(.either)
        case "replayq": return .replay(.client)
        case "replays": return .replay(.server)
        case "comment": return .comment(try regularExpressionArgument(for: name))
        case "m": return .method(try argument(for: name).text.uppercased())
        case "c": return try statusFilter(try argument(for: name))
        case "d": return FilterExpression.domainFilter(try argument(for: name).text)
        case "u": return .url(try regularExpressionArgument(for: name))
        case "t": return .contentType(try regularExpressionArgument(for: name))
        case "h": return .header(try regularExpressionArgument(for: name), in: .both)
        case "hq": return .header(try regularExpressionArgument(for: name), in: .request)
        case "hs": return .header(try regularExpressionArgument(for: name), in: .response)
        case "b": return .body(try regularExpressionArgument(for: name), in: .both)
        case "bq": return .body(try regularExpressionArgument(for: name), in: .request)
        case "bs": return .body(try regularExpressionArgument(for: name), in: .response)
        default: throw FilterParseError(message: "unknown operator '~\(name)'", offset: offset)
        }
    }

    private func statusFilter(_ argument: (text: String, offset: Int)) throws(FilterParseError) -> FilterExpression {
        let text = argument.text.lowercased()
        if text.count <= 3, let code = Int(text), code >= 0 { return .statusCode(code) }
        if text.count == 3, text.hasSuffix("xx"), let digit = text.first?.wholeNumberValue, (1...9).contains(digit) {
            return .statusClass(digit)
        }
        throw FilterParseError(message: "~c needs a status code like 404 or a class like 4xx", offset: argument.offset)
    }

    private func processFilter(_ argument: (text: String, offset: Int)) throws(FilterParseError) -> FilterExpression {
        guard let pid = Int(argument.text), pid >= 0 else {
            throw FilterParseError(message: "~pid needs a process id like 4242", offset: argument.offset)
        }
        return .processID(pid)
    }

    private func grpcStatusFilter(_ argument: (text: String, offset: Int)) throws(FilterParseError) -> FilterExpression {
        if let code = Int(argument.text), code >= 0 { return .grpcStatus(code) }
        if let code = GRPCStatus.code(named: argument.text) { return .grpcStatus(code) }
        throw FilterParseError(message: "~gs needs a gRPC status name like NOT_FOUND or its code like 5", offset: argument.offset)
    }

    // MARK: Helpers

    private mutating func argument(for name: String) throws(FilterParseError) -> (text: String, offset: Int) {
        let token = try peek()
        guard case .word(let text) = token.kind else {
            throw FilterParseError(message: "~\(name) needs an argument", offset: token.offset)
        }
        _ = try advance()
        return (text, token.offset)
    }

    private mutating func regularExpressionArgument(for name: String) throws(FilterParseError) -> FilterPattern {
        let (text, offset) = try argument(for: name)
        return try regularExpression(text, at: offset)
    }

    private func regularExpression(_ text: String, at offset: Int) throws(FilterParseError) -> FilterPattern {
        do {
            return try FilterPattern(regularExpression: text)
        } catch {
            throw FilterParseError(message: "invalid regular expression '\(text)'", offset: offset)
        }
    }

    private mutating func expectOperand(after token: Token) throws(FilterParseError) {
        let next = try peek()
        guard next.kind.startsOperand else {
            throw FilterParseError(message: "expected an expression after \(token.kind.name), found \(next.kind.name)", offset: next.offset)
        }
    }

    private mutating func nested(
        at offset: Int,
        _ body: (inout FilterParser) throws(FilterParseError) -> FilterExpression
    ) throws(FilterParseError) -> FilterExpression {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else {
            throw FilterParseError(message: "nested too deeply (the limit is \(Self.maximumDepth))", offset: offset)
        }
        return try body(&self)
    }

    // MARK: Tokens

    private struct Token {
        var kind: Kind
        var offset: Int

        enum Kind: Equatable {
            case open, close, and, or, not, end
            case `operator`(String)
            case word(String)

            var startsOperand: Bool {
                switch self {
                case .open, .not, .operator, .word: true
                case .close, .and, .or, .end: false
                }
            }

            var name: String {
                switch self {
                case .open: "'('"
                case .close: "')'"
                case .and: "'&'"
                case .or: "'|'"
                case .not: "'!'"
                case .end: "end of input"
                case .operator(let name): "'~\(name)'"
                case .word(let text): "'\(text)'"
                }
            }
        }
    }

    private mutating func peek() throws(FilterParseError) -> Token {
        if let lookahead { return lookahead }
        let token = try lex()
        lookahead = token
        return token
    }

    private mutating func advance() throws(FilterParseError) -> Token {
        let token = try peek()
        lookahead = nil
        return token
    }

    private mutating func lex() throws(FilterParseError) -> Token {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
        let start = position
        guard position < characters.count else { return Token(kind: .end, offset: start) }
        let character = characters[position]
        position += 1
        switch character {
        case "(": return Token(kind: .open, offset: start)
        case ")": return Token(kind: .close, offset: start)
        case "&": return Token(kind: .and, offset: start)
        case "|": return Token(kind: .or, offset: start)
        case "!": return Token(kind: .not, offset: start)
        case "\"", "'": return Token(kind: .word(try lexQuoted(closing: character, from: start)), offset: start)
        case "~":
            let name = lexWhile { $0.isLetter }
            guard !name.isEmpty else { throw FilterParseError(message: "expected an operator name after '~'", offset: start) }
            return Token(kind: .operator(name), offset: start)
        default:
            position -= 1
            return Token(kind: .word(lexWhile { !Self.endsWord($0) }), offset: start)
        }
    }

    private static func endsWord(_ character: Character) -> Bool {
        character.isWhitespace || "()&|\"'".contains(character)
    }

    private mutating func lexWhile(_ predicate: (Character) -> Bool) -> String {
        let start = position
        while position < characters.count, predicate(characters[position]) { position += 1 }
        return String(characters[start ..< position])
    }

    /// Reads a quoted argument. `\"`, `\'` and `\\` are escapes; any other
    /// backslash is kept, so `"\d+"` reaches the regular expression intact.
    private mutating func lexQuoted(closing quote: Character, from start: Int) throws(FilterParseError) -> String {
        var text = ""
        while position < characters.count {
            let character = characters[position]
            position += 1
            if character == quote { return text }
            if character == "\\", position < characters.count, characters[position] == quote || characters[position] == "\\" {
                text.append(characters[position])
                position += 1
            } else {
                text.append(character)
            }
        }
        throw FilterParseError(message: "unclosed quote", offset: start)
    }
}
