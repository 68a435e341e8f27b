import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter
@testable import InspectorCore

final class FilterTests: XCTestCase {
    // MARK: Fixtures

    private func flow(
        method: String = "GET",
        url: String = "https://api.example.com/v1/users?page=2",
        requestHeaders: [HTTPHeader] = [HTTPHeader(name: "Accept", value: "application/json")],
        requestBody: String? = nil,
        status: Int? = 200,
        responseHeaders: [HTTPHeader] = [HTTPHeader(name: "Content-Type", value: "application/json; charset=utf-8")],
        responseBody: String? = #"{"name":"Zoë"}"#,
        mimeType: String? = "application/json",
        state: FlowState = .completed,
        error: FlowError? = nil
    ) -> NetworkLog {
        NetworkLog(
            request: Request(
                method: method, url: url, headers: requestHeaders,
                body: requestBody.map { CapturedBody(data: Data($0.utf8)) }
            ),
            response: status.map {
                Response(
                    statusCode: $0, headers: responseHeaders,
                    body: responseBody.map { CapturedBody(data: Data($0.utf8)) }, mimeType: mimeType
                )
            },
            timing: Timing(startedAt: Date(timeIntervalSince1970: 0)),
            error: error,
            state: state
        )
    }

    private func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> FilterExpression {
        do {
            return try FilterExpression.parse(text)
        } catch {
            XCTFail("'\(text)' did not parse: \(error)", file: file, line: line)
            return .not(.all)
        }
    }

    private func assertMatches(_ text: String, _ log: NetworkLog, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(parse(text, file: file, line: line).matches(log), "'\(text)' should match \(note)", file: file, line: line)
    }

    private func assertMisses(_ text: String, _ log: NetworkLog, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(parse(text, file: file, line: line).matches(log), "'\(text)' should not match \(note)", file: file, line: line)
    }

    private func assertError(
        _ text: String, _ message: String, at offset: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let expression = try FilterExpression.parse(text)
            XCTFail("'\(text)' parsed as \(expression), expected an error", file: file, line: line)
        } catch {
            XCTAssertEqual(error.offset, offset, "offset of '\(error.message)' in '\(text)'", file: file, line: line)
            XCTAssertTrue(error.message.contains(message), "'\(error.message)' should contain '\(message)'", file: file, line: line)
        }
    }

    // MARK: Operators

    func testMethodMatchesWhateverTheCase() {
        assertMatches("~m GET", flow())
        assertMatches("~m get", flow())
        assertMatches("~m propfind", flow(method: "PROPFIND"))
        assertMisses("~m POST", flow())
        assertMisses("~m GE", flow())
        assertMisses("~m GETX", flow())
    }

    func testStatusCodeIsExact() {
        assertMatches("~c 404", flow(status: 404))
        assertMisses("~c 404", flow(status: 200))
        assertMisses("~c 40", flow(status: 404))
    }

    func testStatusClass() {
        assertMatches("~c 4xx", flow(status: 404))
        assertMatches("~c 4XX", flow(status: 499))
        assertMatches("~c 2xx", flow(status: 204))
        assertMisses("~c 4xx", flow(status: 500))
        assertMisses("~c 2xx", flow(status: 302))
    }

    func testStatusNeverMatchesAFlowWithoutResponse() {
        assertMisses("~c 200", flow(status: nil, state: .pending))
        assertMisses("~c 2xx", flow(status: nil, state: .pending))
    }

    func testDomainMatchesHostSubstringNotPathOrQuery() {
        assertMatches("~d example.com", flow())
        assertMatches("~d api.example.com", flow())
        assertMatches("~d EXAMPLE", flow())
        assertMisses("~d users", flow())
        assertMisses("~d other.org", flow(url: "https://example.com/?next=other.org"))
        assertMisses("~d 8080", flow(url: "http://localhost:8080/"))
        assertMatches("~d localhost", flow(url: "http://user:pw@localhost:8080/"))
        assertMisses("~d user", flow(url: "http://user:pw@localhost:8080/"))
        assertMatches("~d ::1", flow(url: "http://[::1]:9000/x"))
    }

    func testDomainWithAPortMatchesTheHostOnThatPort() {
        assertMatches("~d 127.0.0.1:8000", flow(url: "http://127.0.0.1:8000/a"))
        assertMisses("~d 127.0.0.1:8000", flow(url: "http://127.0.0.1:8001/a"))
        assertMisses("~d 127.0.0.1:8000", flow(url: "http://10.0.0.1:8000/a"))
        assertMatches("~d example.com:8443", flow(url: "https://user:pw@api.example.com:8443/x"), "subdomains as without a port")
        assertMatches("~d :8000", flow(url: "http://localhost:8000/"), "any host on the port")
    }

    func testDomainWithAPortTakesTheSchemesDefaultPort() {
        assertMatches("~d example.com:443", flow(url: "https://example.com/"))
        assertMatches("~d example.com:80", flow(url: "HTTP://example.com?q"))
        assertMisses("~d example.com:80", flow(url: "https://example.com/"))
        assertMatches("~d example.com:443", flow(url: "wss://example.com#f"))
    }

    func testDomainWithAPortTakesIPv6InBrackets() {
        assertMatches("~d [::1]:8080", flow(url: "http://[::1]:8080/x"))
        assertMisses("~d [::1]:8080", flow(url: "http://[::1]:9000/x"))
        assertMatches("~d [::1]:80", flow(url: "http://[::1]/x"))
        assertMatches("~d ::1", flow(url: "http://[::1]:9000/x"), "unbracketed, the last colon is the address's")
        assertMisses("~d ::1:9000", flow(url: "http://[::1]:9000/x"))
    }

    func testDomainMatchesAnIPv6HostWithoutItsBrackets() {
        assertMatches("~d [::1]", flow(url: "http://[::1]:9000/x"))
        assertMisses("~d [", flow(url: "http://[::1]:9000/x"), "brackets are not part of the host")
        assertMatches("~d fe80::1", flow(url: "http://[fe80::1]/x"))
    }

    func testDomainWithAPortParsesToHostAndPort() {
        XCTAssertEqual(parse("~d 127.0.0.1:8000"), .domain(FilterPattern(literal: "127.0.0.1"), port: 8000))
        XCTAssertEqual(parse("~d [::1]:8080"), .domain(FilterPattern(literal: "::1"), port: 8080), "the host as the host column shows it")
        XCTAssertEqual(parse("~d example.com"), .domain(FilterPattern(literal: "example.com"), port: nil))
        XCTAssertEqual(parse("~d host:99999"), .domain(FilterPattern(literal: "host:99999"), port: nil), "no such port")
    }

    func testDomainDotIsLiteral() {
        assertMisses("~d api.example", flow(url: "https://apixexample.com/"))
    }

    func testURLIsARegularExpression() {
        assertMatches("~u /v1/users", flow())
        assertMatches(#"~u "users\?page=\d+$""#, flow())
        assertMatches("~u ^HTTPS://", flow())
        assertMisses("~u /v2/", flow())
        assertMisses(#"~u "page=3$""#, flow())
    }

    func testBareAndQuotedWordsAreURLMatches() {
        assertMatches("users", flow())
        assertMatches(#""v1/users""#, flow())
        assertMatches("'v1/users'", flow())
        assertMisses("orders", flow())
        XCTAssertEqual(parse("users"), parse("~u users"))
    }

    func testHeaderMatchesNameColonValueOnEitherSide() {
        assertMatches("~h accept", flow())
        assertMatches(#"~h "accept: application/json""#, flow())
        assertMatches(#"~h "^content-type: application/json""#, flow())
        assertMatches("~h charset=utf-8", flow())
        assertMisses("~h x-request-id", flow())
        assertMisses(#"~h "accept: text""#, flow())
    }

    func testHeaderAnchorsAreTheStartAndEndOfTheWholeLine() {
        assertMatches("~h ^accept", flow())
        assertMatches("~h json$", flow())
        assertMatches("~h utf-8$", flow())
        assertMisses("~h ^application", flow())
        assertMisses("~h accept$", flow())
        assertMisses("~h ^accept$", flow())
        assertMatches(#"~h "^accept: application/json$""#, flow())
        assertMatches("~hs ^CONTENT-TYPE", flow())
        assertMatches(#"~h "t: a""#, flow(), "a match may span the separator")
        assertMatches(#"~h "t:.a""#, flow())
        assertMisses("~h t.a", flow())
    }

    func testAnchoredHeaderNameMustBeTheWholeName() {
        let log = flow(responseHeaders: [
            HTTPHeader(name: "Server", value: "nginx/1.25"), HTTPHeader(name: ":status", value: "200"),
            HTTPHeader(name: "X-Server", value: "s"), HTTPHeader(name: "Servers", value: "x"),
        ])
        assertMatches(#"~h "^server: ngin.""#, log)
        assertMatches(#"~h "^servers: x$""#, log)
        assertMisses(#"~h "^server: s$""#, log, "X-Server is another name")
        assertMatches(#"~h "^:status: 200""#, log, "a name with a colon of its own")
        assertMatches(#"~h "^: s""#, flow(responseHeaders: [HTTPHeader(name: "", value: "s")]))
        assertMatches(#"~h "^Straße: x""#, flow(responseHeaders: [HTTPHeader(name: "STRASSE", value: "x")]))
    }

    func testHeaderWithNonASCIIValueStillMatchesByCaseFolding() {
        let log = flow(requestHeaders: [HTTPHeader(name: "X-Note", value: "Straße")])
        assertMatches("~h strasse", log)
        assertMatches("~hq ^x-note", log)
        assertMisses("~h strase", log)
    }

    func testHeaderSideOperators() {
        assertMatches("~hq accept", flow())
        assertMisses("~hs accept", flow())
        assertMatches("~hs content-type", flow())
        assertMisses("~hq content-type", flow())
        assertMisses("~hs accept", flow(status: nil, state: .pending))
    }

    func testBodyMatchesRequestAndResponseText() {
        assertMatches("~b name", flow())
        assertMatches("~b zoë", flow())
        assertMatches("~b ZOË", flow())
        assertMatches(#"~b "\"name\":\s*\"Z""#, flow())
        assertMatches("~b secret", flow(method: "POST", requestBody: "password=secret"))
        assertMisses("~b missing", flow())
        assertMisses("~b anything", flow(responseBody: nil))
    }

    func testBodySideOperators() {
        let post = flow(method: "POST", requestBody: "q=needle", responseBody: "haystack")
        assertMatches("~bq needle", post)
        assertMisses("~bs needle", post)
        assertMatches("~bs haystack", post)
        assertMisses("~bq haystack", post)
    }

    func testBodyMatchesInvalidUTF8AsReplacementCharacters() {
        var log = flow()
        log.response?.body = CapturedBody(data: Data([0x61, 0xFF, 0x62]))
        assertMatches("~b a.b", log)
        assertMatches(#"~b "a\x{FFFD}b""#, log)
    }

    func testContentTypeFromMIMETypeOrHeader() {
        assertMatches("~t json", flow())
        assertMatches("~t application/json", flow(responseHeaders: [], mimeType: "application/json"))
        assertMatches("~t charset", flow(mimeType: nil))
        assertMatches(
            "~t form-urlencoded",
            flow(
                method: "POST",
                requestHeaders: [HTTPHeader(name: "content-type", value: "application/x-www-form-urlencoded")],
                status: nil, state: .pending
            )
        )
        assertMisses("~t image", flow())
        assertMisses("~t accept", flow())
    }

    func testErrorsAreFailedCancelledOrCarryingAnError() {
        let timeout = FlowError(domain: "NSURLErrorDomain", code: -1001, message: "timed out")
        assertMatches("~e", flow(status: nil, state: .failed, error: timeout))
        assertMatches("~e", flow(status: nil, state: .cancelled))
        assertMatches("~e", flow(state: .completed, error: timeout))
        assertMisses("~e", flow())
        assertMisses("~e", flow(status: 500))
    }

    func testPendingIsNotFinal() {
        assertMatches("~p", flow(status: nil, state: .pending))
        assertMatches("~p", flow(state: .responded))
        assertMisses("~p", flow(state: .completed))
        assertMatches("~q", flow(status: nil, state: .pending))
        assertMisses("~q", flow(state: .responded))
        assertMatches("~s", flow(state: .responded))
        assertMisses("~s", flow(status: nil, state: .pending))
        assertMatches("~s & ~c 200", flow(state: .completed))
        assertMisses("~p", flow(status: nil, state: .failed))
    }

    // MARK: Combinators

    func testNotAndOr() {
        assertMatches("!~m POST", flow())
        assertMisses("!~m GET", flow())
        assertMatches("~m GET & ~c 200", flow())
        assertMisses("~m GET & ~c 404", flow())
        assertMatches("~m POST | ~c 200", flow())
        assertMisses("~m POST | ~c 404", flow())
        assertMatches("!!~m GET", flow())
    }

    func testPrecedenceIsNotThenAndThenOr() {
        XCTAssertEqual(
            parse("~m GET | ~m POST & !~c 200"),
            .or(.method("GET"), .and(.method("POST"), .not(.statusCode(200))))
        )
        XCTAssertEqual(
            parse("!~m GET & ~c 200 | ~p"),
            .or(.and(.not(.method("GET")), .statusCode(200)), .pending)
        )
        // Would match if '|' bound tighter than '&'.
        assertMisses("~m POST & ~c 500 | ~c 200 & ~m PUT", flow())
    }

    func testParenthesesOverridePrecedence() {
        XCTAssertEqual(
            parse("(~m GET | ~m POST) & ~c 200"),
            .and(.or(.method("GET"), .method("POST")), .statusCode(200))
        )
        assertMatches("(~m GET | ~m POST) & ~c 200", flow())
        assertMisses("~m POST & (~c 200 | ~p)", flow())
        assertMatches("!(~m POST | ~c 404)", flow())
        assertMatches("((~d example) & (!(~e)))", flow())
    }

    func testJuxtapositionIsAnd() {
        XCTAssertEqual(parse("~m GET ~c 200"), parse("~m GET & ~c 200"))
        XCTAssertEqual(parse("~m GET !~e users"), .and(.and(.method("GET"), .not(.error)), parse("users")))
        assertMisses("~m GET ~c 404", flow())
        XCTAssertEqual(parse("~e | ~p ~m GET"), .or(.error, .and(.pending, .method("GET"))))
    }

    func testAndOrAreLeftAssociative() {
        XCTAssertEqual(parse("~e & ~p & ~m A"), .and(.and(.error, .pending), .method("A")))
        XCTAssertEqual(parse("~e | ~p | ~m A"), .or(.or(.error, .pending), .method("A")))
    }

    func testEmptyExpressionMatchesEverything() {
        XCTAssertEqual(parse(""), .all)
        XCTAssertEqual(parse("  \t "), .all)
        XCTAssertTrue(FilterExpression.all.matches(flow()))
    }

    func testOperatorsNeedNoSpaceBeforeTheirArgument() {
        XCTAssertEqual(parse("~c4xx"), .statusClass(4))
        XCTAssertEqual(parse("!~e&~p"), .and(.not(.error), .pending))
    }

    // MARK: Quoting

    func testQuotedArgumentsKeepSpacesAndOperators() {
        assertMatches(#"~h "accept: application/json""#, flow())
        assertMatches(#"~u "a(b|c)d" | ~m GET"#, flow())
        assertMatches(#"~u 'page=(1|2)'"#, flow())
    }

    func testQuoteEscapes() {
        XCTAssertEqual(parse(#"~u "say \"hi\"""#), .url(try FilterPattern(regularExpression: #"say "hi""#)))
        XCTAssertEqual(parse(#"~u "back\\slash""#), .url(try FilterPattern(regularExpression: #"back\slash"#)))
        XCTAssertEqual(parse(#"~u "\d+""#), .url(try FilterPattern(regularExpression: #"\d+"#)))
        XCTAssertEqual(parse(#"~u 'it\'s'"#), .url(try FilterPattern(regularExpression: "it's")))
    }

    // MARK: UTF-8

    func testUTF8ArgumentsAndHosts() {
        let log = flow(url: "https://bücher.example/straße?q=café", responseBody: "Grüße")
        assertMatches("~d BÜCHER", log)
        assertMatches("straße", log)
        assertMatches("~u CAFÉ$", log)
        assertMatches("~b grüße", log)
        assertMisses("~d straße", log)
        XCTAssertTrue(FilterExpression.freeText("Café").matches(log))
    }

    func testErrorOffsetsCountCharactersNotBytes() {
        assertError("~u ünïcödé ~x", "unknown operator '~x'", at: 11)
        assertError("(~d 日本語", "expected ')'", at: 7)
    }

    // MARK: Errors

    func testUnclosedParenthesis() {
        assertError("(~m GET", "expected ')'", at: 7)
        assertError("((~m GET) | ~c 200", "expected ')'", at: 18)
    }

    func testDescriptionGivesTheColumn() {
        do {
            _ = try FilterExpression.parse("(~m GET & ~c 200")
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual(error.description, "expected ')' at column 17")
        }
    }

    func testUnexpectedClosingParenthesis() {
        assertError("~m GET )", "unexpected ')'", at: 7)
        assertError(")", "found ')'", at: 0)
        assertError("()", "expected an expression after '('", at: 1)
    }

    func testUnknownOperator() {
        assertError("~x foo", "unknown operator '~x'", at: 0)
        assertError("~m GET & ~zz", "unknown operator '~zz'", at: 9)
        assertError("~ foo", "expected an operator name after '~'", at: 0)
    }

    func testMissingArgument() {
        assertError("~m", "~m needs an argument", at: 2)
        assertError("~d & ~e", "~d needs an argument", at: 3)
        assertError("(~u)", "~u needs an argument", at: 3)
        assertError("~h !x", "~h needs an argument", at: 3)
    }

    func testBadStatusArgument() {
        assertError("~c abc", "~c needs a status code", at: 3)
        assertError("~c 4x", "~c needs a status code", at: 3)
        assertError("~c 0xx", "~c needs a status code", at: 3)
        assertError("~c 1000", "~c needs a status code", at: 3)
    }

    func testBadRegularExpressionPointsAtTheArgument() {
        assertError("~u (", "~u needs an argument", at: 3)
        assertError(#"~m GET & ~u "a(b""#, "invalid regular expression 'a(b'", at: 12)
        assertError("~h [z-a]", "invalid regular expression '[z-a]'", at: 3)
        assertError("~b x{2,1}", "invalid regular expression", at: 3)
        assertError(#"bad\"#, "invalid regular expression", at: 0)
    }

    func testDanglingOperators() {
        assertError("~m GET &", "expected an expression after '&', found end of input", at: 8)
        assertError("~m GET |", "expected an expression after '|'", at: 8)
        assertError("~m GET & | ~e", "expected an expression after '&', found '|'", at: 9)
        assertError("!", "expected an expression after '!'", at: 1)
        assertError("& ~e", "found '&'", at: 0)
        assertError("| ~e", "found '|'", at: 0)
    }

    func testUnclosedQuote() {
        assertError(#"~u "abc"#, "unclosed quote", at: 3)
        assertError("~u 'abc", "unclosed quote", at: 3)
    }

    func testDeepNestingIsRefusedNotACrash() {
        assertError(String(repeating: "(", count: 1000) + "~e" + String(repeating: ")", count: 1000), "nested too deeply", at: 64)
        assertError(String(repeating: "!", count: 1000) + "~e", "nested too deeply", at: 64)
        assertError(Array(repeating: "~e", count: 1000).joined(separator: " "), "too many terms", at: 512 * 3)
    }

    func testEveryOperatorInTheSyntaxSummaryParses() throws {
        let operators = FilterExpression.syntaxSummary.flatMap { row in
            row.syntax.split(whereSeparator: { $0 == " " || $0 == "," }).filter { $0.hasPrefix("~") }
        }
        XCTAssertEqual(Set(operators), ["~m", "~c", "~d", "~u", "~h", "~hq", "~hs", "~b", "~bq", "~bs", "~t", "~e", "~p", "~q", "~s", "~marked", "~comment",
                                             "~inbound", "~outbound", "~parent", "~id", "~app", "~pid", "~grpc", "~gs"])
        for name in operators {
            let argument = name == "~c" || name == "~pid" ? "200" : name == "~parent" ? "~e" : name == "~gs" ? "NOT_FOUND" : "x"
            let text = ["~e", "~p", "~q", "~s", "~marked", "~inbound", "~outbound"].contains(name) ? String(name) : "\(name) \(argument)"
            XCTAssertNoThrow(try FilterExpression.parse(text), text)
        }
    }

    // MARK: Free text

    func testFreeTextSearchesURLMethodAndStatus() {
        let log = flow(method: "DELETE", status: 418)
        XCTAssertTrue(FilterExpression.freeText("api.EXAMPLE").matches(log))
        XCTAssertTrue(FilterExpression.freeText("delete").matches(log))
        XCTAssertTrue(FilterExpression.freeText("418").matches(log))
        XCTAssertTrue(FilterExpression.freeText("41").matches(log))
        XCTAssertTrue(FilterExpression.freeText("page=2").matches(log))
        XCTAssertFalse(FilterExpression.freeText("404").matches(log))
        XCTAssertFalse(FilterExpression.freeText("zoë").matches(log), "bodies are not searched")
    }

    func testFreeTextIsLiteralNotARegularExpression() {
        XCTAssertTrue(FilterExpression.freeText("?page=").matches(flow()))
        XCTAssertFalse(FilterExpression.freeText("v.").matches(flow(url: "https://x/v1")))
        XCTAssertTrue(FilterExpression.freeText("(").matches(flow(url: "https://x/a(b")))
        XCTAssertTrue(FilterExpression.freeText("  users ").matches(flow()), "trims white space")
    }

    func testBlankFreeTextMatchesEverything() {
        XCTAssertEqual(FilterExpression.freeText("  "), .all)
    }

    // MARK: The byte scan and the regular expression engine agree

    func testByteScanIsUsedForPlainWordsOnly() throws {
        XCTAssertTrue(try FilterPattern(regularExpression: "api.example.com").usesByteScan)
        XCTAssertTrue(try FilterPattern(regularExpression: #"\.json$"#).usesByteScan)
        XCTAssertTrue(try FilterPattern(regularExpression: "^/api").usesByteScan)
        XCTAssertTrue(try FilterPattern(regularExpression: #"cost\$"#).usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: #"\d"#).usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: "a^b").usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: "a|b").usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: "café").usesByteScan)
    }

    private let sampleTexts = [
        "abc", "ABC", "a\nc", "a\rc", "aéc", "a😀c", "a\u{2028}c", "a\u{85}c", "", "x", "xé", "ééx",
        "file.json", "filexjson", "file.json\n", "file.json\r\n", "file.json\n\n", "file.JSON\u{2029}",
        "/Users/1", "a-b", "a%20b", "a/b", "ac", "a\u{301}c", "/api/v1", "x/api", "\n/api",
        "cost$", "Server: nginx/1.2", "items?page=7", "ITEMS?PAGE=7&x", "\"id\": 42,", "\"ID\":42",
        "ſerver: nginx", "straße", "strasse", "\u{212A}ey", "key",
        "a\u{0B}b", "a\u{0C}b", "a\tb", "a b", "a_b", "A9", "zz", "Z-a", "[x]", "a]b", "a^b", "a\\b",
        "/v1/users/42", "/V2/USERS/7/", "/v3/users/x", "page=10\r\n", "id=", "aaaaab", "ab\u{0B}",
        "GET /api/v1/items?page=3&sort=desc", "x-request-id: 1f2e", "nginx/1.25.3", "x\u{85}",
    ]

    private let invalidUTF8: [[UInt8]] = [
        [0x61, 0xFF, 0x62], [0x61, 0xC3, 0x62], [0x61, 0xE2, 0x82, 0x63], [0x61, 0xF0, 0x9F, 0x98, 0x63],
        [0x61, 0xED, 0xA0, 0x80, 0x63], [0x61, 0xC0, 0xAF, 0x63], [0x61, 0x80, 0x80, 0x63], [0x78, 0xF4, 0x90, 0x80, 0x80],
    ]

    /// Holds `FilterPattern` to `NSRegularExpression`'s answers on every sample.
    private func assertAgreesWithEngine(_ patterns: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for pattern in patterns {
            let pattern = try XCTUnwrap(pattern)
            let ours = try FilterPattern(regularExpression: pattern)
            let engine = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            for text in sampleTexts + invalidUTF8.map({ String(decoding: $0, as: UTF8.self) }) {
                let expected = engine.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                XCTAssertEqual(ours.matches(text), expected, "/\(pattern)/ on \(text.debugDescription)", file: file, line: line)
            }
            for bytes in invalidUTF8 {
                let text = String(decoding: bytes, as: UTF8.self)
                let expected = engine.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                XCTAssertEqual(ours.matches(utf8: Data(bytes)), expected, "/\(pattern)/ on \(bytes)", file: file, line: line)
            }
        }
    }

    func testByteScanAgreesWithTheRegularExpressionEngine() throws {
        try assertAgreesWithEngine([
            "a.c", "A.C", ".", "..", "x.", ".x", #"\.json"#, "a.b", "user", #"a\-b"#, "%20", "a\\/b",
            "^/api", "^a", "c$", #"json$"#, "^$", "^.$", "^abc$", #"cost\$"#, "^", "$", "^x.", "nginx",
        ])
    }

    func testUnicodeCaseFoldingIsLeftToTheEngine() throws {
        try assertAgreesWithEngine(["é.", "straße", "strasse", "key", "server", "[a-c]{3}", "(?i)abc", "a|x"])
    }

    func testByteRegexCoversGrouplessPatterns() throws {
        for pattern in [#"items\?page=\d+$"#, #"/v[12]/"#, #"\"id\":\s*42"#, "a|b", "x{2,3}", #"[^/]+\.json"#, "a+?b"] {
            XCTAssertTrue(try FilterPattern(regularExpression: pattern).usesByteRegex, pattern)
        }
        for pattern in ["(a|b)c", #"\bword"#, "a*+b", "[[:alpha:]]", "é+", #"\p{L}"#, "[a&&b]"] {
            XCTAssertFalse(try FilterPattern(regularExpression: pattern).usesByteRegex, pattern)
        }
    }

    func testByteRegexAgreesWithTheEngine() throws {
        try assertAgreesWithEngine([
            #"items\?page=\d+$"#, #"/v[12]/users/\d+/?$"#, #"\"id\":\s*42"#, #"^/v\d/"#, "a|b|zz", "^a|b$", "|x",
            "x{2,3}", "a{2}", "a{2,}b", "a{0,1}b", "a+?b", "a*b", ".*", "^.*$", "^.+$", "a.b", #"\s"#, #"\S+"#,
            #"\w+_\w"#, #"\W"#, #"\D\d"#, "[^a]", "[^A-Z]b", "[a-c]", "[_-a]", "[Z-a]", "[]a]", "[a-]", "[.]",
            #"[\s]b"#, #"[^\s]"#, #"[\]x]"#, #"[\d-]"#, #"a\tb"#, #"page=\d+\r?$"#, "x-request-id: [0-9a-f]+",
            #"nginx/\d+\.\d+"#, "b$", "^$", "^", "$", "[^/]+$", "a\\^b", "]",
        ])
    }

    func testPrefilterIsTextEveryMatchContains() {
        func required(_ pattern: String) -> [UInt8]? {
            RegexTranslation.requiredLiteral(in: pattern).map(\.bytes)
        }
        XCTAssertEqual(required(#"items\?page=[0-9]$"#), Array("items?page=".utf8))
        XCTAssertEqual(required(#"^Server: ngin."#), Array("server: ngin".utf8))
        XCTAssertEqual(required(#"\"id\":\s*42"#), Array(#""id":"#.utf8))
        XCTAssertEqual(required("abcd?"), Array("abc".utf8))
        XCTAssertEqual(required("ab*cdef"), Array("cdef".utf8))
        XCTAssertEqual(required("xy{0,2}z"), Array("x".utf8))
        XCTAssertEqual(required("(foo|bar)bazz"), Array("bazz".utf8))
        XCTAssertEqual(required("[abc]+zz"), Array("zz".utf8))
        XCTAssertEqual(required(#"\x41bc-de"#), Array("-de".utf8))
        XCTAssertEqual(required(#"\p{L}+ok"#), Array("ok".utf8))
        XCTAssertEqual(required(#"\bword\b"#), Array("word".utf8))
        XCTAssertNil(required("foo|bar"))
        XCTAssertNil(required("(?x) a b c"))
        XCTAssertNil(required(#"\Qa|b\E"#))
        XCTAssertNil(required("[a-z]+"))
    }

    func testPrefilteredPatternsAgreeWithTheEngine() throws {
        try assertAgreesWithEngine([
            #"items\?page=[0-9]$"#, #"^server: ngin."#, #"\"id\":\s*42"#, "abcd?", "ab*c", "(foo|bar)baz",
            "[abc]+c", #"\x41bc"#, #"\bkey\b"#, "se?rver", "(?:ser)ver", #"s\w+r"#, #"stra(ss|ß)e"#,
            "j[s]on$", "file\\.json$",
        ])
    }

    func testEveryCharacterFoldingToASCIILettersIsLeftToTheEngine() {
        // ẞ folds to "ss" though its lower-case mapping is ß; ICU matches it.
        var expected: [Unicode.Scalar] = ["\u{1E9E}"]
        for value in UInt32(0x80)...0x1FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let properties = scalar.properties
            let mappings = [properties.lowercaseMapping, properties.uppercaseMapping, properties.titlecaseMapping]
            if mappings.contains(where: { $0.unicodeScalars.contains { $0.isASCII && $0.properties.isAlphabetic } }) {
                expected.append(scalar)
            }
        }
        XCTAssertTrue(expected.contains("\u{212A}"), "sanity: the Kelvin sign lower-cases to k")
        for scalar in expected {
            let bytes = Array(String(scalar).utf8)
            bytes.withUnsafeBufferPointer {
                XCTAssertTrue(ByteNeedle.foldsToASCIILetters($0, at: 0), "U+\(String(scalar.value, radix: 16, uppercase: true))")
            }
        }
        Array("é😀a".utf8).withUnsafeBufferPointer { bytes in
            XCTAssertFalse(bytes.indices.contains { ByteNeedle.foldsToASCIILetters(bytes, at: $0) })
        }
    }
}

final class HeaderSeparatorNeedleTests: XCTestCase {
    private func answer(_ pattern: String, _ name: String, _ value: String) throws -> Bool? {
        let compiled = try FilterPattern(regularExpression: pattern)
        return Array(name.utf8).withUnsafeBufferPointer { name in
            Array(value.utf8).withUnsafeBufferPointer { value in compiled.matchesHeader(name: name, value: value) }
        }
    }

    func testANeedleSpanningTheSeparatorIsAnsweredWithoutBuildingTheLine() throws {
        XCTAssertEqual(try answer("x-request-id: req-99", "X-Request-ID", "req-991"), true, "on the separator")
        XCTAssertEqual(try answer("x-request-id: req-99", "X-Request-ID", "req-1"), false)
        XCTAssertEqual(try answer("request-id: req", "X-Request-ID", "req-1"), true, "name suffix, value prefix")
        XCTAssertEqual(try answer("e: f", "Note", "a e: f"), true, "wholly inside the value")
        XCTAssertEqual(try answer(" a: b", "X", "a: b"), true, "starting on the separator's space")
        XCTAssertNil(try answer("x: y", ":authority", "y"), "a name with a colon takes the general path")
        XCTAssertNil(try answer("x: zoë", "X", "zoë"), "non-ASCII takes the general path")
    }
}
