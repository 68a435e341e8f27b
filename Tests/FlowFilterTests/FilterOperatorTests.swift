import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter

/// Each operator of the filter language (`~m`, `~c`, `~d`, `~u`, `~h`, `~b`,
/// `~t`, `~e`, `~q`, `~s`, `~p`…) on the flows it must and must not match.
final class FilterOperatorTests: FilterTestCase {
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
}
