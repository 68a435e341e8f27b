// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import Foundation
import XCTest
@testable import CaptureAgentAsyncHTTPClient

/// The key that pairs a request the tracer saw (the app's URL, as text) with
/// the head a connection sends (`Host` field and origin-form URI), and a
/// redirect's resolved target with the next hop's head.
final class AHCKeyTests: XCTestCase {
    /// Each URL as the app gives it, and the `Host` field and URI
    /// AsyncHTTPClient sends for it: both must give the same key.
    func testTheAppsURLAndTheWireHeadMeet() {
        let cases: [(url: String, host: String, uri: String, scheme: String, key: String)] = [
            ("http://127.0.0.1:8080/item/1", "127.0.0.1:8080", "/item/1", "http", "127.0.0.1:8080/item/1"),
            ("http://h/a/", "h", "/a/", "http", "h:80/a/"),
            ("http://h", "h", "/", "http", "h:80/"),
            ("http://h?x=1", "h", "/?x=1", "http", "h:80/?x=1"),
            ("http://h/a%20b?q=%20", "h", "/a%20b?q=%20", "http", "h:80/a b?q=%20"),
            ("HTTPS://Example.COM/x", "Example.COM", "/x", "https", "example.com:443/x"),
            ("https://example.com:8443/x#part", "example.com:8443", "/x", "https", "example.com:8443/x"),
            ("http://[::1]:8080/x", "[::1]:8080", "/x", "http", "::1:8080/x"),
            ("http://[::1]/x", "[::1]", "/x", "http", "::1:80/x"),
        ]
        for c in cases {
            XCTAssertEqual(Key.of(urlText: c.url), c.key, c.url)
            XCTAssertEqual(Key.of(hostField: c.host, uri: c.uri, scheme: c.scheme), c.key, c.url)
        }
    }

    /// URLs the byte reader leaves to Foundation still get a key, the same
    /// as from the parsed URL.
    func testOtherURLsGoThroughFoundation() throws {
        for text in ["http://user:pw@h:81/x?y", "http://h%41/x"] {
            let key = try XCTUnwrap(Key.of(urlText: text), text)
            XCTAssertEqual(key, Key.of(try XCTUnwrap(URL(string: text))), text)
        }
        XCTAssertEqual(Key.of(urlText: "http://user:pw@h:81/x?y"), "h:81/x?y")
        XCTAssertNil(Key.of(urlText: "not a url"))
    }

    /// A redirect's target keeps its trailing slash, as the next hop's URI does.
    func testARedirectTargetMeetsTheNextHop() throws {
        let target = try XCTUnwrap(URL(string: "/next/?a=1", relativeTo: URL(string: "http://h:8080/first")))
        XCTAssertEqual(Key.of(target.absoluteURL), Key.of(hostField: "h:8080", uri: "/next/?a=1", scheme: "http"))
        XCTAssertEqual(Key.of(target.absoluteURL), "h:8080/next/?a=1")
    }
}
#endif
