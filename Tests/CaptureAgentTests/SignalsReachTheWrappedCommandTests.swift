#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest

/// A signal sent to `netinspect --dump -- COMMAND` (a CI runner's SIGTERM
/// at its timeout, a kill(1) from another shell) reaches the command, and
/// netinspect ends with the command's status.
final class SignalsReachTheWrappedCommandTests: XCTestCase {
    /// A shell that says it is ready, then exits with a status naming the signal it trapped.
    private static let trapping = #"trap 'echo "got INT"; exit 11' INT; trap 'echo "got TERM"; exit 12' TERM; echo ready; while :; do sleep 0.05; done"#

    private func signalReaches(_ number: Int32, expecting status: Int32, saying text: String) throws {
        let binary = try Prerequisite.netinspect()
        let output = NSTemporaryDirectory() + "netinspect-signal-\(getpid())-\(number).out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        defer { unlink(output) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--dump", "--", "/bin/sh", "-c", Self.trapping]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let read = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually(timeout: 30) { read().contains("ready") }, read())
        kill(process.processIdentifier, number)
        XCTAssertTrue(eventually(timeout: 30) { !process.isRunning }, "netinspect did not end after the command did")
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, status, read())
        XCTAssertTrue(read().contains(text), read())
    }

    func testSIGTERMReachesTheCommand() throws {
        try signalReaches(SIGTERM, expecting: 12, saying: "got TERM")
    }

    func testSIGINTReachesTheCommand() throws {
        try signalReaches(SIGINT, expecting: 11, saying: "got INT")
    }
}
