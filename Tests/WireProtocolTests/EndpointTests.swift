import XCTest
import WireProtocol

final class EndpointTests: XCTestCase {
    func testParsesUnixAndTCP() throws {
        XCTAssertEqual(try Endpoint(parsing: "unix:/tmp/x.sock"), .unix(path: "/tmp/x.sock"))
        XCTAssertEqual(try Endpoint(parsing: "tcp:127.0.0.1:9123"), .tcp(host: "127.0.0.1", port: 9123))
        XCTAssertEqual(try Endpoint(parsing: "tcp:[::1]:0"), .tcp(host: "::1", port: 0))
        XCTAssertEqual(try Endpoint(parsing: "tcp:localhost:65535"), .tcp(host: "localhost", port: 65535))
    }

    func testDescriptionParsesBackToTheSameEndpoint() throws {
        for endpoint: Endpoint in [.unix(path: "/run/a b.sock"), .tcp(host: "::1", port: 80), .tcp(host: "10.0.0.1", port: 1)] {
            XCTAssertEqual(try Endpoint(parsing: endpoint.description), endpoint)
        }
    }

    func testRejectsWithActionableMessages() {
        let cases: [(String, String)] = [
            ("/tmp/x.sock", "expected unix:PATH or tcp:HOST:PORT"),
            ("unix:", "needs a socket path"),
            ("tcp:127.0.0.1", "expected tcp:HOST:PORT"),
            ("tcp::80", "needs a host"),
            ("tcp:localhost:http", "port must be a number"),
            ("tcp:localhost:70000", "port must be a number"),
            ("tcp:::1:9123", "an IPv6 address takes brackets: tcp:[ADDRESS]:PORT"),
            ("unix:/" + String(repeating: "a", count: 103), "the limit is 103"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try Endpoint(parsing: text), text) {
                XCTAssertTrue("\($0)".contains(message), "\(text): '\($0)' should contain '\(message)'")
            }
        }
    }

    func testDefaultEndpointPrefersXDGRuntimeDir() {
        XCTAssertEqual(Endpoint.defaultEndpoint(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], userID: 1000),
                       .unix(path: "/run/user/1000/netinspect.sock"))
        XCTAssertEqual(Endpoint.defaultEndpoint(environment: [:], userID: 1000), .unix(path: "/tmp/netinspect-1000.sock"))
        XCTAssertEqual(Endpoint.defaultEndpoint(environment: ["XDG_RUNTIME_DIR": ""], userID: 0), .unix(path: "/tmp/netinspect-0.sock"))
    }

    func testLoopbackDetection() {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] { XCTAssertTrue(Endpoint.isLoopback(host: host), host) }
        for host in ["0.0.0.0", "10.0.0.1", "::", "example.com", "128.0.0.1"] { XCTAssertFalse(Endpoint.isLoopback(host: host), host) }
    }
}
