import Foundation
@testable import InspectorCore
import WireProtocol
import XCTest

/// `:new curl …` reads a curl command as a person pastes it: from a
/// browser, a README, or netinspect's own `C`, which it reads back exactly.
final class PastedCurlCommandTests: XCTestCase {
    private func request(_ command: String, file: StaticString = #filePath, line: UInt = #line) -> WireProtocol.Request? {
        do {
            return try CurlCommand.request(from: command)
        } catch {
            XCTFail("\(command) → \(error)", file: file, line: line)
            return nil
        }
    }

    private func refusal(_ command: String) -> String? {
        do {
            _ = try CurlCommand.request(from: command)
            return nil
        } catch {
            return error.description
        }
    }

    func testABrowsersMultiLineCommandWithQuotesAndContinuations() throws {
        let pasted = """
            curl 'https://api.example.com/v1/orders?x=1' \\
              -H 'accept: application/json' \\
              -H "Authorization: Bearer \\"t0k\\"" \\
              -H $'X-Note: it\\'s \\u00e9' \\
              --data-raw $'{"a":"b\\nc"}' \\
              --compressed
            """
        let parsed = try XCTUnwrap(request(pasted))
        XCTAssertEqual(parsed.method, "POST", "data implies POST")
        XCTAssertEqual(parsed.url, "https://api.example.com/v1/orders?x=1")
        XCTAssertEqual(parsed.headers.first("accept"), "application/json")
        XCTAssertEqual(parsed.headers.first("Authorization"), #"Bearer "t0k""#)
        XCTAssertEqual(parsed.headers.first("X-Note"), "it's é")
        XCTAssertEqual(parsed.headers.first("Accept-Encoding"), "deflate, gzip")
        XCTAssertEqual(parsed.headers.first("Content-Type"), "application/x-www-form-urlencoded", "curl's own type for -d")
        XCTAssertEqual(parsed.body?.data, Data("{\"a\":\"b\nc\"}".utf8))
    }

    func testEachOptionAPersonUses() throws {
        let put = try XCTUnwrap(request("curl -sSLk -XPUT -A 'probe/1' -e https://ref.example/ -b 'a=1; b=2' -u ann:pw http://h.example/x"))
        XCTAssertEqual(put.method, "PUT")
        XCTAssertEqual(put.headers.first("User-Agent"), "probe/1")
        XCTAssertEqual(put.headers.first("Referer"), "https://ref.example/")
        XCTAssertEqual(put.headers.first("Cookie"), "a=1; b=2")
        XCTAssertEqual(put.headers.first("Authorization"), "Basic " + Data("ann:pw".utf8).base64EncodedString())
        XCTAssertNil(put.body)

        let json = try XCTUnwrap(request(#"curl --json '{"n":1}' example.com/api"#))
        XCTAssertEqual(json.method, "POST")
        XCTAssertEqual(json.url, "http://example.com/api", "curl's default scheme")
        XCTAssertEqual(json.headers.first("Content-Type"), "application/json")
        XCTAssertEqual(json.headers.first("Accept"), "application/json")

        let form = try XCTUnwrap(request("curl -d a=1 --data b=2 --data-binary c=3 -H 'Content-Type: text/plain' https://h/"))
        XCTAssertEqual(form.body?.data, Data("a=1&b=2&c=3".utf8), "several data options join with &")
        XCTAssertEqual(form.headers.filter { $0.name.lowercased() == "content-type" }.map(\.value), ["text/plain"], "the person's type wins")

        let query = try XCTUnwrap(request("curl -G --data-urlencode 'q=a b&c' https://h/search"))
        XCTAssertEqual(query.method, "GET")
        XCTAssertEqual(query.url, "https://h/search?q=a%20b%26c")
        XCTAssertNil(query.body)

        XCTAssertEqual(try XCTUnwrap(request("curl -I https://h/")).method, "HEAD")
        XCTAssertEqual(try XCTUnwrap(request("curl -X DELETE --url https://h/1")).method, "DELETE")
    }

    func testWhatCannotBeImportedIsNamed() {
        XCTAssertEqual(refusal("curl -F file=@a.png https://h/")?.contains("curl's -F is not an option netinspect imports"), true)
        XCTAssertEqual(refusal("curl --proxy http://p:3128 https://h/")?.contains("--proxy"), true)
        XCTAssertEqual(refusal("curl -d @body.json https://h/")?.contains("reads a file"), true)
        XCTAssertEqual(refusal("curl -u ann https://h/")?.contains("has no password"), true)
        XCTAssertEqual(refusal("curl -b cookies.txt https://h/")?.contains("reads cookies from a file"), true)
        XCTAssertEqual(refusal("wget https://h/")?.contains("not a curl command"), true)
        XCTAssertEqual(refusal("curl 'https://h/")?.contains("never closed"), true)
        XCTAssertEqual(refusal("curl -H"), "-H needs a value")
        XCTAssertEqual(refusal("curl -H 'A: b'"), "no URL")
        XCTAssertEqual(refusal("curl ftp://h/x")?.contains("not an http or https URL"), true)
        XCTAssertEqual(refusal("curl https://a/ https://b/")?.contains("two URLs"), true)
        XCTAssertEqual(refusal("curl https://h/?a=1&b=2")?.contains("'&' outside quotes"), true)
    }

    /// What `C` copies is read back as the same request: method, URL,
    /// header fields in order (empty ones too) and body bytes, binary included.
    func testTheExportedCommandImportsAsTheSameRequest() throws {
        let requests = [
            Request(method: "GET", url: "https://api.example.com/v1/items?page=2&q=[x]", headers: [HTTPHeader(name: "Accept", value: "application/json")]),
            Request(method: "POST", url: "http://127.0.0.1:8080/orders",
                    headers: [HTTPHeader(name: "Content-Type", value: "application/json"), HTTPHeader(name: "X-Empty", value: "")],
                    body: CapturedBody(data: Data(#"{"name":"Zoë","note":"it's"}"#.utf8))),
            Request(method: "PUT", url: "https://h.example/blob", headers: [HTTPHeader(name: "Authorization", value: "Bearer a'b")],
                    body: CapturedBody(data: Data([0, 1, 2, 0x25, 0x5C, 0x27, 0xFF, 0x0A, 0x41]))),
            Request(method: "HEAD", url: "https://h.example/", headers: []),
            Request(method: "GET", url: "https://h.example/odd", headers: [], body: CapturedBody(data: Data("@not-a-file".utf8))),
            Request(method: "DELETE", url: "https://h.example/items/1", headers: [HTTPHeader(name: "User-Agent", value: "app/2")]),
        ]
        for original in requests {
            let command = CurlCommand.make(for: original)
            let imported = try XCTUnwrap(request(command), command)
            XCTAssertEqual(imported.method, original.method, command)
            XCTAssertEqual(imported.url, original.url, command)
            XCTAssertEqual(imported.headers, original.headers, command)
            XCTAssertEqual(imported.body?.data, original.body?.data, command)
        }
    }
}
