import Foundation
import TestSupport
import XCTest

/// `netinspect --version` prints the version the agent also sends in its
/// hello (`CaptureAgent.version`, the one place it is written).
final class VersionFlagTests: XCTestCase {
    func testVersionPrintsTheAgentsVersionAndTheProtocolVersions() throws {
        let run = try ProgramRun.collect([NetinspectBinary.url.path, "--version"], timeout: 60)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CaptureAgent/CaptureAgent.swift"), encoding: .utf8)
        let version = try XCTUnwrap(source.firstMatch(of: /public static let version = "([^"]+)"/)?.1)
        XCTAssertEqual(run.output, "netinspect \(version) (protocol versions 1-2)\n")
    }
}
