import WireProtocol
import XCTest

/// A `Content-Type` value read one way: its essence, its parameters and
/// what kind of body it announces.
final class MediaTypeTests: XCTestCase {
    func testTheEssenceIsTrimmedAndLowered() {
        XCTAssertEqual(MediaType("  Text/HTML ; charset=utf-8").essence, "text/html")
        XCTAssertEqual(MediaType("").essence, "")
        XCTAssertEqual(MediaType(";").essence, "")
        XCTAssertEqual(MediaType("ÉCRIT/Texte").essence, "écrit/texte")
        XCTAssertNil(MediaType.essence(of: nil))
    }

    func testParametersAreFoundInAnyCaseWithoutQuotes() {
        let type = MediaType(#"multipart/form-data; Boundary="a b"; charset=UTF-8"#)
        XCTAssertEqual(type.parameter("boundary"), "a b")
        XCTAssertEqual(type.parameter("CHARSET"), "UTF-8")
        XCTAssertNil(type.parameter("q"))
        XCTAssertEqual(MediaType.parameter("filename", in: #"form-data; name="f"; filename="x.txt""#), "x.txt")
    }

    func testASuffixNamesTheSyntax() {
        let problem = MediaType("application/problem+json")
        XCTAssertEqual(problem.type, "application")
        XCTAssertEqual(problem.subtype, "problem+json")
        XCTAssertEqual(problem.suffix, "json")
        XCTAssertTrue(problem.isJSON)
        XCTAssertNil(MediaType("application/json").suffix)
        XCTAssertTrue(MediaType("image/svg+xml").isMarkup)
        XCTAssertTrue(MediaType("Application/X-WWW-Form-Urlencoded; charset=utf-8").isForm)
        XCTAssertTrue(MediaType("multipart/mixed; boundary=x").isMultipart)
        XCTAssertFalse(MediaType("text/plain; profile=json").isJSON, "a parameter names no syntax")
    }

    /// `essence(of:)` lowers ASCII by itself, byte by byte (every response
    /// runs it); it must give what trimming and `lowercased()` give, for
    /// every shape of `Content-Type`.
    func testTheEssenceReadByteByByteIsWhatTrimmingAndLowercasingGive() {
        func reference(_ value: String) -> String {
            let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            return type.trimmingCharacters(in: CharacterSet(charactersIn: " \t")).lowercased()
        }
        let values = [
            "text/html; charset=utf-8", "Application/JSON", "  TEXT/Plain  ;q=1", "\timage/PNG\t", "", ";", "  ",
            "multipart/form-data; boundary=ABC", "application/vnd.API+JSON", "text/ÄÖÜ; x", "ÉCRIT/Texte",
            "application/json;", "a/b ; c", "Z/@[`{",
        ]
        for value in values {
            XCTAssertEqual(MediaType.essence(of: value), reference(value), "\(value.debugDescription)")
        }
        XCTAssertNil(MediaType.essence(of: nil))
    }
}
