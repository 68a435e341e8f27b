import Foundation
import XCTest

/// docs/COMPATIBILITY.md is the matrix `RealPeerMatrixTests` runs, rendered:
/// a cell's limit changes the document and the test's expectation together.
final class CompatibilityDocumentTests: XCTestCase {
    private let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/COMPATIBILITY.md")

    func testTheDocumentIsTheDeclaredMatrix() throws {
        let rendered = CompatibilityMatrix.document()
        if ProcessInfo.processInfo.environment["NETINSPECT_WRITE_COMPATIBILITY"] == "1" {
            try Data(rendered.utf8).write(to: path)
        }
        let written = try String(contentsOf: path, encoding: .utf8)
        XCTAssertEqual(written, rendered, "docs/COMPATIBILITY.md is not the declared matrix: NETINSPECT_WRITE_COMPATIBILITY=1 swift test --filter CompatibilityDocumentTests")
    }

    /// Every stream cell names a test that exists.
    func testEveryStreamCellNamesATestThatExists() throws {
        let tests = path.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/CaptureAgentTests")
        for cell in CompatibilityMatrix.streamCells {
            let parts = cell.test.split(separator: ".")
            XCTAssertEqual(parts.count, 2, cell.test)
            let source = try String(contentsOf: tests.appendingPathComponent("\(parts[0]).swift"), encoding: .utf8)
            XCTAssertTrue(source.contains("func \(parts[1])()"), "\(cell.test) is not a test in \(parts[0]).swift")
        }
    }
}
