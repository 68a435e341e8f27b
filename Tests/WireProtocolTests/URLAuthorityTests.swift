import WireProtocol
import XCTest

/// One reading of host and port for URLs and addresses, IPv6 included, and
/// one way of writing an address back.
final class URLAuthorityTests: XCTestCase {
    private func read(_ url: String) -> [String] {
        let authority = URLAuthority(url: url)
        return [authority.host, authority.port.map(String.init) ?? "-"]
    }

    func testAURLsHostIsWithoutUserInfoPortOrBrackets() {
        XCTAssertEqual(read("https://user:pw@API.Example.com:8443/x?y"), ["API.Example.com", "8443"])
        XCTAssertEqual(read("http://[::1]:8080/"), ["::1", "8080"])
        XCTAssertEqual(read("http://[fe80::1%25eth0]/x"), ["fe80::1%25eth0", "-"])
        XCTAssertEqual(read("http://localhost"), ["localhost", "-"])
        XCTAssertEqual(read("HTTP://Ünïcode.Example#frag"), ["Ünïcode.Example", "-"])
        XCTAssertEqual(read("https://a@b@c.example?q"), ["c.example", "-"])
        XCTAssertEqual(read("example.com:81/redirect?to=http://other/"), ["example.com", "81"], "no scheme")
        XCTAssertEqual(read("/path?next=http://other/"), ["", "-"], "a path is not a scheme")
        XCTAssertEqual(read(""), ["", "-"])
    }

    func testAPortIsUpTo65535InDigits() {
        XCTAssertEqual(read("http://h:65535/"), ["h", "65535"])
        XCTAssertEqual(read("http://h:65536/"), ["h", "-"])
        XCTAssertEqual(read("http://h:http/"), ["h", "-"])
        XCTAssertEqual(read("http://h:/"), ["h", "-"])
    }

    func testAnIPv6AddressTakesBracketsToBeGivenAPort() {
        XCTAssertEqual(URLAuthority(address: "[::1]:5000"), URLAuthority(host: "::1", port: 5000))
        XCTAssertEqual(URLAuthority(address: "::1"), URLAuthority(host: "::1", port: nil))
        XCTAssertEqual(URLAuthority(address: "::1:5000"), URLAuthority(host: "::1:5000", port: nil), "no way to tell the port")
        XCTAssertEqual(URLAuthority(address: "10.0.0.5:40001"), URLAuthority(host: "10.0.0.5", port: 40001))
        XCTAssertEqual(URLAuthority(address: ":8080"), URLAuthority(host: "", port: 8080))
    }

    func testASchemesDefaultPortIsKnownForHTTPAndWebSockets() {
        XCTAssertEqual(URLAuthority.defaultPort(ofScheme: "https"), 443)
        XCTAssertEqual(URLAuthority.defaultPort(ofScheme: "HTTP"), 80)
        XCTAssertEqual(URLAuthority.defaultPort(ofScheme: "wss"), 443)
        XCTAssertEqual(URLAuthority.defaultPort(ofScheme: "ws"), 80)
        XCTAssertNil(URLAuthority.defaultPort(ofScheme: "ftp"))
    }

    func testAnAddressIsWrittenAsItIsRead() {
        for (host, port) in [("127.0.0.1", 53124), ("::1", 80), ("fe80::1%eth0", 1), ("example.com", 443)] {
            let text = PeerAddress.text(host: host, port: port)
            XCTAssertEqual(URLAuthority(address: text), URLAuthority(host: host, port: port), text)
        }
        XCTAssertEqual(PeerAddress.text(host: "::1", port: 5000), "[::1]:5000")
        XCTAssertEqual(PeerAddress.text(ip: nil, port: nil, unixPath: "/run/a.sock"), "unix:/run/a.sock")
        XCTAssertNil(PeerAddress.text(ip: nil, port: nil, unixPath: ""), "an unnamed Unix socket")
    }
}
