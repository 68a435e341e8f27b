import XCTest
@testable import CaptureAgent

/// `mimeType(of:)` lowers ASCII by itself; it must give what trimming and
/// `lowercased()` give, for every shape of `Content-Type`.
final class MimeTypeTests: XCTestCase {
    private func reference(_ value: String) -> String {
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return type.trimmingCharacters(in: CharacterSet(charactersIn: " \t")).lowercased()
    }

    func testAsTrimmingAndLowercasingGive() {
        let values = [
            "text/html; charset=utf-8", "Application/JSON", "  TEXT/Plain  ;q=1", "\timage/PNG\t", "", ";", "  ",
            "multipart/form-data; boundary=ABC", "application/vnd.API+JSON", "text/ÄÖÜ; x", "ÉCRIT/Texte",
            "application/json;", "a/b ; c", "Z/@[`{",
        ]
        for value in values {
            XCTAssertEqual(mimeType(of: value), reference(value), "\(value.debugDescription)")
        }
        XCTAssertNil(mimeType(of: nil))
    }
}
