@testable import InspectorTUI
import TestSupport
import WireProtocol
import XCTest

final class ArgumentTests: XCTestCase {
    func testDefaultsListenOnTheDefaultSocket() throws {
        let command = try Netinspect.parse([])
        XCTAssertEqual(try command.endpoints, [Endpoint.defaultEndpoint()])
        XCTAssertEqual(command.maxFlows, 100_000)
    }

    func testRepeatedListenAndOptions() throws {
        let command = try Netinspect.parse(["--listen", "unix:/tmp/a.sock", "--listen", "tcp:127.0.0.1:9123", "--max-flows", "500"])
        XCTAssertEqual(try command.endpoints, [.unix(path: "/tmp/a.sock"), .tcp(host: "127.0.0.1", port: 9123)])
        XCTAssertEqual(command.maxFlows, 500)
    }

    func testNonLoopbackTCPNeedsAToken() {
        XCTAssertThrowsError(try Netinspect.parse(["--listen", "tcp:0.0.0.0:9123"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("--token"), Netinspect.message(for: error))
        }
        XCTAssertNoThrow(try Netinspect.parse(["--listen", "tcp:0.0.0.0:9123", "--token", "s3cret"]))
    }

    func testMalformedAddressSaysWhatIsExpected() {
        XCTAssertThrowsError(try Netinspect.parse(["--listen", "localhost:9000"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("unix:PATH or tcp:HOST:PORT"), Netinspect.message(for: error))
        }
    }

    func testMessagesAddsLinesToDumpOrJSONOnly() throws {
        XCTAssertThrowsError(try Netinspect.parse(["--messages"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("--messages adds lines to --dump or --json"))
        }
        XCTAssertTrue(try Netinspect.parse(["--dump", "--messages"]).messages)
        XCTAssertTrue(try Netinspect.parse(["--json", "--messages"]).messages)
    }

    func testMaxFlowsMustBePositive() {
        XCTAssertThrowsError(try Netinspect.parse(["--max-flows", "0"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("--max-flows"))
        }
    }

    func testProtoReadsEachDescriptorSetAndABadOneIsRefusedNamingTheFile() throws {
        let directory = GRPCFixtures.directory
        let set = directory.appendingPathComponent("echo.pb").path, source = directory.appendingPathComponent("echo.proto").path
        XCTAssertEqual(try OptionFiles(Netinspect.parse(["--proto", set, "--proto", set])).protoSchema.methods.count, 4)
        XCTAssertThrowsError(try OptionFiles(Netinspect.parse(["--proto", set, "--proto", source]))) { error in
            let message = Netinspect.message(for: error)
            XCTAssertTrue(message.contains("--proto \(source): not a descriptor set ("), message)
        }
    }

    /// Parsing checks the options and reads no file; the files they name
    /// are read once, when netinspect runs, and a bad one is still a usage
    /// error naming its option.
    func testParsingReadsNoFileAndRunningReadsEachOnce() throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        for arguments in [["--proto", missing + ".pb"], ["--rules", missing + ".txt"], ["--keys", missing + ".keys"]] {
            let command = try Netinspect.parse(arguments)
            XCTAssertThrowsError(try OptionFiles(command), "\(arguments)") { error in
                XCTAssertEqual(Netinspect.exitCode(for: error).rawValue, 64, "a usage error: \(arguments)")
                XCTAssertTrue(Netinspect.message(for: error).contains(missing), Netinspect.message(for: error))
            }
        }
    }
}
