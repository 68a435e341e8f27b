import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real `netinspect --dump --messages`: an event's line is printed as
/// soon as the part that ends it arrives, while its flow is still open.
final class HeadlessMessagesEndToEndTests: XCTestCase {
    func testAnEventsLineIsPrintedWhileItsFlowIsStillOpen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-messages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("s.sock").path
        let stdout = directory.appendingPathComponent("out.txt"), stderr = directory.appendingPathComponent("err.txt")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let process = Process()
        process.executableURL = NetinspectBinary.url
        process.arguments = ["--dump", "--messages", "--listen", "unix:\(socket)"]
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGTERM); process.waitUntilExit() } }
        func contents(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually(timeout: 20) { contents(stderr).contains("listening") }, contents(stderr))

        let agent = try WireClient(agentOn: socket)
        let head = StreamFixtures.eventStreamHead(1)
        for message in head { try agent.send(message) }
        try agent.send(StreamFixtures.part(1, "data: first\n\ndata: sec", offset: 0, at: 0.5))
        XCTAssertTrue(eventually(timeout: 20) { contents(stdout).contains("first") }, "the first event, before the flow ends:\n\(contents(stdout))")
        XCTAssertFalse(contents(stdout).contains("sec"), "the second event is not whole yet:\n\(contents(stdout))")
        XCTAssertFalse(contents(stdout).contains("POST"), "the flow has not finished:\n\(contents(stdout))")

        try agent.send(StreamFixtures.part(1, "ond\n\n", offset: 20, at: 0.75))
        try agent.send(StreamFixtures.finish(1, body: "data: first\n\ndata: second\n\n"))
        XCTAssertTrue(eventually(timeout: 20) { contents(stdout).contains("POST") }, contents(stdout))
        let lines = contents(stdout).split(separator: "\n")
        XCTAssertEqual(lines.count, 3, "two events, then the flow:\n\(contents(stdout))")
        XCTAssertTrue(lines[1].contains("← event") && lines[1].contains("second"), String(lines[1]))
    }
}
