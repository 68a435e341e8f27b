@testable import InspectorTUI
import WireProtocol
import XCTest

/// `--listen otlp:HOST:PORT` beside the agents' addresses, and its TLS options.
final class OTLPArgumentTests: XCTestCase {
    func testOTLPAddressesGoToTheReceiverAndTheRestToTheAgentListener() throws {
        let command = try Netinspect.parse(["--listen", "otlp:127.0.0.1:4318", "--listen", "unix:/tmp/a.sock"])
        XCTAssertEqual(try command.endpoints, [.unix(path: "/tmp/a.sock")])
        XCTAssertEqual(try command.otlpConfiguration?.endpoints, [.tcp(host: "127.0.0.1", port: 4318)])
    }

    func testOnlyOTLPAddressesOpenNoAgentSocket() throws {
        let command = try Netinspect.parse(["--listen", "otlp:[::1]:4318"])
        XCTAssertEqual(try command.endpoints, [])
        XCTAssertEqual(try command.otlpConfiguration?.endpoints, [.tcp(host: "::1", port: 4318)])
        XCTAssertNil(try Netinspect.parse([]).otlpConfiguration)
    }

    func testANonLoopbackOTLPAddressNeedsAToken() {
        XCTAssertThrowsError(try Netinspect.parse(["--listen", "otlp:0.0.0.0:4318"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("--token"), Netinspect.message(for: error))
        }
        XCTAssertNoThrow(try Netinspect.parse(["--listen", "otlp:0.0.0.0:4318", "--token", "s3cret"]))
    }

    func testTLSOptionsComeAsAPairAndOnlyWithAnOTLPAddress() {
        XCTAssertThrowsError(try Netinspect.parse(["--listen", "otlp:127.0.0.1:4318", "--tls-cert", "c.pem"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("go together"), Netinspect.message(for: error))
        }
        XCTAssertThrowsError(try Netinspect.parse(["--tls-cert", "c.pem", "--tls-key", "k.pem"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("otlp:"), Netinspect.message(for: error))
        }
        XCTAssertThrowsError(try Netinspect.parse(["--listen", "otlp:127.0.0.1:99999"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("otlp:HOST:PORT"), Netinspect.message(for: error))
        }
    }
}
