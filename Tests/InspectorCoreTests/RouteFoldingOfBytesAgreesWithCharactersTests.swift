import XCTest
@testable import InspectorCore

/// `RouteFolding.route(ofURL:)` folds an ASCII URL byte by byte; it must
/// give what the Character fold of its path (`route(ofPath:)` of
/// `Format.pathAndQuery`) gives, on every URL built from the pieces that
/// decide a fold: separators, the scheme's `://` (also where it should not
/// be), digits, UUIDs, hashes, near misses of each, empty segments, and
/// characters beyond ASCII (which take the Character fold).
final class RouteFoldingOfBytesAgreesWithCharactersTests: XCTestCase {
    private static let prefixes = [
        "https://api.example.com", "http://h:8080", "https://user@h", "h", "", "https://h?x=1", "https://h#top",
        "mailto:x", "://", "HTTPS://Example.COM",
    ]
    private static let pieces = [
        "/", "?", "#", ":", "://", "//", "42", "0", "users", "-", "{id}", "%2F", "\r\n", "é", "e\u{301}",
        "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-42661417400", "123e4567xe89b-42d3-a456-426614174000",
        "deadbeefdeadbeef", "deadbeefdeadbee", "0123456789012345", "DEADBEEF01234567", "deadbeefdeadbeeg",
    ]

    func testEveryGeneratedURLFoldsAsItsPathDoes() {
        var compared = 0
        for prefix in Self.prefixes {
            for first in Self.pieces {
                for second in Self.pieces {
                    for third in ["", "/", "?page=2", "/7", "#a/b"] {
                        let url = prefix + "/" + first + second + third
                        let expected = RouteFolding.route(ofPath: Substring(Format.pathAndQuery(of: url)))
                        XCTAssertEqual(RouteFolding.route(ofURL: url), expected, url.debugDescription)
                        compared += 1
                    }
                }
            }
        }
        // Also URLs that are only a prefix, and prefixes put together.
        for prefix in Self.prefixes {
            for other in Self.prefixes + Self.pieces {
                let url = prefix + other
                XCTAssertEqual(RouteFolding.route(ofURL: url), RouteFolding.route(ofPath: Substring(Format.pathAndQuery(of: url))),
                               url.debugDescription)
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 20_000)
    }
}
