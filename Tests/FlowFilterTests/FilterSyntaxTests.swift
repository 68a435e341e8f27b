import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter

/// The filter language's syntax: `!`, `&`, `|`, parentheses and their
/// precedence, quoting, UTF-8, errors that point at their column, and free
/// text (the `/` search).
final class FilterSyntaxTests: FilterTestCase {
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
                                             "~inbound", "~outbound", "~parent", "~id", "~app", "~pid", "~grpc", "~gs", "~websocket", "~stream", "~replay", "~replayq", "~replays"])
        for name in operators {
            let argument = name == "~c" || name == "~pid" ? "200" : name == "~parent" ? "~e" : name == "~gs" ? "NOT_FOUND" : "x"
            let text = ["~e", "~p", "~q", "~s", "~marked", "~inbound", "~outbound", "~websocket", "~stream", "~replay", "~replayq", "~replays"].contains(name) ? String(name) : "\(name) \(argument)"
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
}
