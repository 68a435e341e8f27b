import Foundation
import XCTest
@testable import WireProtocol

/// The wire reader's UUID parser accepts exactly the canonical 8-4-4-4-12
/// hex form, and reads it as Foundation's `UUID(uuidString:)` does.
/// Foundation on Linux is laxer: it reads "-F1C2B8E-…" and "6F 1C2B8E-…"
/// (a sign or a space inside a pair), which the wire never carries.
final class UUIDParsingTests: XCTestCase {
    func testAgreesWithFoundationOnUUIDsInEitherCase() {
        for _ in 0 ..< 200 {
            let uuid = UUID()
            XCTAssertEqual(parse(uuid.uuidString), uuid)
            XCTAssertEqual(parse(uuid.uuidString.lowercased()), uuid)
        }
    }

    func testRefusesAnythingButTheCanonicalForm() {
        let valid = "6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B"
        // Every position with each character either side of a digit range, and a dash.
        for offset in 0 ..< 36 {
            for replacement in ["/", ":", "@", "G", "`", "g", "-", "0", " "] {
                var chars = Array(valid)
                chars[offset] = Character(replacement)
                let text = String(chars)
                XCTAssertEqual(parse(text), isCanonical(text) ? UUID(uuidString: text) : nil, text)
            }
        }
        for text in ["", String(valid.dropLast()), valid + "0", "{\(valid.dropFirst().dropLast())}",
                     valid.replacingOccurrences(of: "-", with: "")] {
            XCTAssertNil(parse(text), text)
        }
    }

    private func isCanonical(_ text: String) -> Bool {
        text.utf8.count == 36 && text.utf8.enumerated().allSatisfy { offset, byte in
            [8, 13, 18, 23].contains(offset) ? byte == UInt8(ascii: "-") : Character(UnicodeScalar(byte)).isHexDigit
        }
    }

    private func parse(_ text: String) -> UUID? {
        Array(text.utf8).withUnsafeBufferPointer { parseUUID($0) }
    }
}
