import Foundation
@testable import InspectorCore
import InspectorIngest
import WireProtocol
import XCTest

@testable import InspectorTUI

/// netinspect's own client (URLSession) against a loopback server that
/// keeps each request as it arrived: the flow records what went on the
/// wire, fields URLSession added included, and what came back.
final class OwnClientTests: XCTestCase {
    private var server: RawRequestServer!
    private var inbox: Inbox!
    private var client: ReplayClient!

    override func setUpWithError() throws {
        server = try RawRequestServer()
        inbox = Inbox()
        client = ReplayClient(inbox: inbox)
    }

    override func tearDown() {
        client?.shutdown()
        server?.shutdown()
        super.tearDown()
    }

    /// Sends `request` and waits for its flow: what started and how it ended.
    private func exchange(_ request: Request, timeout: Duration = .seconds(20)) throws -> (log: NetworkLog, finished: FlowFinished) {
        client.send(OwnRequest(request: request, replayOf: nil, isEdited: false))
        var log: NetworkLog?
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            for case .message(_, let message) in inbox.wait(timeout: .milliseconds(200)) {
                switch message {
                case .flowStarted(let started): log = started
                case .flowFinished(let finished) where finished.id == log?.id: return (try XCTUnwrap(log), finished)
                default: break
                }
            }
        }
        throw NoAnswer(request: "\(request.method) \(request.url)")
    }

    private struct NoAnswer: Error {
        var request: String
    }

    private func normalized(_ fields: [(String, String)]) -> [String] {
        fields.map { "\($0.0.lowercased()): \($0.1)" }.sorted()
    }

    /// The logged fields (the request's own plus those URLSession added) are
    /// exactly the fields on the wire, for each way a body is sent or not.
    func testTheLoggedRequestIsTheRequestOnTheWire() throws {
        let cases: [(method: String, body: String?, headers: [HTTPHeader])] = [
            ("GET", nil, [HTTPHeader(name: "X-Request-ID", value: "get-1")]),
            ("POST", "a=1&b=2", []),
            ("POST", #"{"sku":"tea-42"}"#, [HTTPHeader(name: "Content-Type", value: "application/json")]),
            ("PUT", "new", [HTTPHeader(name: "Accept", value: "text/plain")]),
            ("DELETE", nil, []),
            ("HEAD", nil, [HTTPHeader(name: "User-Agent", value: "mine/1")]),
        ]
        for (index, item) in cases.enumerated() {
            let body = item.body.map { CapturedBody(data: Data($0.utf8)) }
            let (log, finished) = try exchange(Request(method: item.method, url: server.url("/echo?\(index)"), headers: item.headers, body: body))
            XCTAssertEqual(finished.state, .completed, "\(item.method): \(String(describing: finished.error))")
            let received = try XCTUnwrap(server.requests.first { $0.requestLine.contains("/echo?\(index) ") }, item.method)
            XCTAssertEqual(received.requestLine, "\(item.method) /echo?\(index) HTTP/1.1")
            XCTAssertEqual(normalized(log.request.headersAsSent.map { ($0.name, $0.value) }), normalized(received.fields.map { ($0.name, $0.value) }),
                           "\(item.method): logged fields vs the server's")
            XCTAssertEqual(log.request.headers, item.headers, "\(item.method): the request's own fields, as written")
            XCTAssertEqual(received.body, Array((item.body ?? "").utf8))
            let added = Set(log.request.clientHeaders.map { $0.name.lowercased() })
            XCTAssertTrue(added.isSuperset(of: ["host", "accept-encoding", "connection"]), "\(item.method): \(added)")
            XCTAssertEqual(added.contains("user-agent"), item.method != "HEAD", "a request's own User-Agent is not added again")
        }
    }

    /// URLRequest keeps one value per name: repeated fields go as one, and
    /// the log says so rather than show fields that were never sent.
    func testRepeatedFieldsAreLoggedAsTheOneFieldSent() throws {
        let headers = [HTTPHeader(name: "X-Tag", value: "a"), HTTPHeader(name: "Cookie", value: "s=1"),
                       HTTPHeader(name: "x-tag", value: "b"), HTTPHeader(name: "Cookie", value: "t=2")]
        let (log, _) = try exchange(Request(method: "GET", url: server.url("/repeat"), headers: headers))
        XCTAssertEqual(log.request.headers, [HTTPHeader(name: "X-Tag", value: "a, b"), HTTPHeader(name: "Cookie", value: "s=1; t=2")])
        let received = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(received.fields.filter { $0.name.lowercased() == "x-tag" }.map(\.value), ["a, b"])
        XCTAssertEqual(received.fields.filter { $0.name.lowercased() == "cookie" }.map(\.value), ["s=1; t=2"])
    }

    /// libcurl decodes a gzip body before anyone sees it: the log keeps the
    /// response's `Content-Encoding` and marks the body decoded.
    func testAGzipBodyIsLoggedDecoded() throws {
        let (_, finished) = try exchange(Request(method: "GET", url: server.url("/gzip")))
        let response = try XCTUnwrap(finished.response)
        XCTAssertEqual(response.headers.first { $0.name.lowercased() == "content-encoding" }?.value, "gzip")
        XCTAssertEqual(response.body?.data, Data(RawRequestServer.gzipPlain))
        XCTAssertEqual(response.body?.isDecoded, true)
        XCTAssertEqual(response.mimeType, "application/json")
    }

    /// A redirect is the answer, with its body; nothing follows it.
    func testARedirectIsNotFollowed() throws {
        let (_, finished) = try exchange(Request(method: "GET", url: server.url("/redirect")))
        XCTAssertEqual(finished.response?.statusCode, 302)
        XCTAssertEqual(finished.response?.headers.first { $0.name == "Location" }?.value, "/elsewhere")
        XCTAssertEqual(finished.response?.body?.data, Data("moved".utf8))
        XCTAssertFalse(server.requests.contains { $0.requestLine.contains("/elsewhere") })
    }

    /// A 401 with a challenge is the answer too (corelibs would otherwise
    /// wait for credentials that never come).
    func testAChallengeIsAnsweredWithTheUnauthorizedResponse() throws {
        let (_, finished) = try exchange(Request(method: "GET", url: server.url("/auth")), timeout: .seconds(10))
        XCTAssertEqual(finished.state, .completed, "\(String(describing: finished.error))")
        XCTAssertEqual(finished.response?.statusCode, 401)
        XCTAssertEqual(finished.response?.body?.data, Data("denied".utf8))
        XCTAssertEqual(server.requests.filter { $0.requestLine.contains("/auth") }.count, 1, "sent once, no retry")
    }

    /// The body is kept up to 1 MiB; its true size is counted.
    func testALargeBodyIsCutAtTheCapWithItsTrueSize() throws {
        let (_, finished) = try exchange(Request(method: "GET", url: server.url("/big")))
        let body = try XCTUnwrap(finished.response?.body)
        XCTAssertEqual(body.data.count, ReplayClient.bodyCap)
        XCTAssertEqual(body.size, RawRequestServer.bigSize)
        XCTAssertTrue(body.isTruncated)
    }

    /// A failure is a FlowError in URLSession's terms; a URL URLSession
    /// cannot send fails at once, before anything goes out.
    func testFailuresAreURLSessionErrors() throws {
        let gone = try RawRequestServer()
        let refusedPort = gone.port
        gone.shutdown()
        let (_, refused) = try exchange(Request(method: "GET", url: "http://127.0.0.1:\(refusedPort)/"))
        XCTAssertEqual(refused.state, .failed)
        XCTAssertEqual(refused.error?.domain, "URLSession")
        XCTAssertEqual(refused.error?.code, NSURLErrorCannotConnectToHost, "\(String(describing: refused.error))")
        let (_, unsendable) = try exchange(Request(method: "GET", url: "ftp://127.0.0.1/file"))
        XCTAssertEqual(unsendable.error, FlowError(domain: "URLSession", code: NSURLErrorBadURL, message: "not an http or https URL: ftp://127.0.0.1/file"))
    }
}

/// The pieces of the own client's record that need no network.
final class OwnClientRecordTests: XCTestCase {
    func testLibcurlsVersionTextNamesItsVersionAndDecoders() {
        let debian = AddedHeaderFields.Libcurl(versionText: "libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 libidn2/2.3.3 nghttp2/1.52.0")
        XCTAssertEqual(debian, AddedHeaderFields.Libcurl(version: "7.88.1", contentCodings: ["deflate", "gzip", "br", "zstd"]))
        XCTAssertEqual(AddedHeaderFields.Libcurl(versionText: "libcurl/8.5.0-DEV zlib/1.3")?.contentCodings, ["deflate", "gzip"])
        XCTAssertEqual(AddedHeaderFields.Libcurl(versionText: "libcurl/8.5.0-DEV zlib/1.3")?.version, "8.5.0")
        XCTAssertNil(AddedHeaderFields.Libcurl(versionText: "something else"))
    }

    func testHostCarriesThePortOnlyWhenItIsNotTheSchemes() throws {
        XCTAssertEqual(AddedHeaderFields.host(of: try XCTUnwrap(URL(string: "http://example.com:80/x"))), "example.com")
        XCTAssertEqual(AddedHeaderFields.host(of: try XCTUnwrap(URL(string: "https://example.com/x"))), "example.com")
        XCTAssertEqual(AddedHeaderFields.host(of: try XCTUnwrap(URL(string: "http://127.0.0.1:8080/"))), "127.0.0.1:8080")
        XCTAssertEqual(AddedHeaderFields.host(of: try XCTUnwrap(URL(string: "http://[::1]:8080/"))), "[::1]:8080")
    }

    func testWhatURLSessionAddsDependsOnWhatTheRequestHas() throws {
        let fields = AddedHeaderFields(processName: "netinspect", languageCode: "en",
                                       libcurl: .init(version: "7.88.1", contentCodings: ["deflate", "gzip"]))
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/"))
        XCTAssertEqual(fields.fields(method: "POST", url: url, headers: [HTTPHeader(name: "accept", value: "*/*")], bodySize: 3), [
            HTTPHeader(name: "Host", value: "127.0.0.1:9"), HTTPHeader(name: "Accept-Encoding", value: "deflate, gzip"),
            HTTPHeader(name: "Connection", value: "keep-alive"), HTTPHeader(name: "User-Agent", value: "netinspect (unknown version) curl/7.88.1"),
            HTTPHeader(name: "Accept-Language", value: "en"), HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"),
            HTTPHeader(name: "Content-Length", value: "3"),
        ])
        let unknownLibcurl = AddedHeaderFields(processName: "netinspect", languageCode: nil, libcurl: nil)
        XCTAssertEqual(unknownLibcurl.fields(method: "GET", url: url, headers: [], bodySize: 0).map(\.name), ["Host", "Accept", "Connection"],
                       "what cannot be known is left out, not guessed")
    }
}
