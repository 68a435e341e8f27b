import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

final class DisplayWidthTests: XCTestCase {
    func testWideAndZeroWidthCharacters() {
        XCTAssertEqual(DisplayWidth.of("abc"), 3)
        XCTAssertEqual(DisplayWidth.of("東京"), 4)
        XCTAssertEqual(DisplayWidth.of("🚀"), 2)
        XCTAssertEqual(DisplayWidth.of("❤️"), 2)
        XCTAssertEqual(DisplayWidth.of("e\u{301}"), 1)
        XCTAssertEqual(DisplayWidth.of("👩‍💻"), 2)
        XCTAssertEqual(DisplayWidth.of("Zoë"), 3)
    }

    func testTruncationEndsWithAnEllipsisAndNeverSplitsAWideCharacter() {
        XCTAssertEqual("hello world".truncated(toWidth: 8), "hello w…")
        XCTAssertEqual("東京東京".truncated(toWidth: 4), "東…")
        XCTAssertEqual(DisplayWidth.of("東京東京".truncated(toWidth: 4)), 3)
        XCTAssertEqual("short".truncated(toWidth: 10), "short")
    }

    func testScreenWritesWideCharactersAsTwoCells() {
        var screen = Screen(size: Size(width: 6, height: 1))
        screen.write("a東b", row: 0, column: 0)
        XCTAssertEqual(screen[0, 1].character, "東")
        XCTAssertTrue(screen[0, 2].isContinuation)
        XCTAssertEqual(screen[0, 3].character, "b")
        XCTAssertEqual(screen.text, "a東b")
    }
}

final class BodyFormatterTests: XCTestCase {
    func testJSONIsIndentedAndColouredKeepingKeyOrder() {
        let lines = BodyFormatter.json(#"{"b":1,"a":[true,null],"c":{}}"#)
        XCTAssertEqual(lines.map(\.text), ["{", #"  "b": 1,"#, #"  "a": ["#, "    true,", "    null", "  ],", #"  "c": {}"#, "}"])
        XCTAssertEqual(lines[1].spans.first { $0.text == #""b""# }?.style, .jsonKey)
        XCTAssertEqual(lines[3].spans.first { $0.text == "true" }?.style, .jsonLiteral)
    }

    func testTruncatedJSONStillIndents() {
        XCTAssertEqual(BodyFormatter.json(#"{"a":{"b":"unfinish"#).map(\.text), ["{", #"  "a": {"#, #"    "b": "unfinish"#])
    }

    func testFormBodiesBecomeATable() {
        let lines = BodyFormatter.form("name=Zo%C3%AB+K&empty=")
        XCTAssertEqual(lines.map(\.text), ["name  │ Zoë K", "empty │ "])
    }

    func testBinaryBecomesAHexDump() {
        let lines = BodyFormatter.lines(for: CapturedBody(data: Data([0x89, 0x50, 0x4E, 0x47, 0, 1, 2])), contentType: "image/png")
        XCTAssertEqual(lines.map(\.text), ["00000000  89 50 4e 47 00 01 02                              |.PNG...|"])
    }

    func testTruncatedBodyCarriesANoticeWithTheFullSize() {
        let body = CapturedBody(data: Data("abc".utf8), size: 5_000_000, isTruncated: true)
        let text = BodyFormatter.lines(for: body, contentType: "text/plain").map(\.text)
        XCTAssertEqual(text.first, "Body truncated: showing 3 B of 4.8 MiB (5000000 bytes)")
        XCTAssertEqual(text.last, "abc")
    }

    func testKindIsGuessedFromTheBytesWithoutAType() {
        XCTAssertEqual(BodyFormatter.kind(of: Data(" [1]".utf8), contentType: nil), .json)
        XCTAssertEqual(BodyFormatter.kind(of: Data("plain".utf8), contentType: nil), .text)
        XCTAssertEqual(BodyFormatter.kind(of: Data([0, 1, 2, 3, 0xFF]), contentType: nil), .binary)
    }
}

final class FormatTests: XCTestCase {
    func testSizesDurationsAndTimes() {
        XCTAssertEqual(Format.size(512), "512 B")
        XCTAssertEqual(Format.size(1536), "1.5 KiB")
        XCTAssertEqual(Format.size(23 * 1024 * 1024), "23 MiB")
        XCTAssertEqual(Format.duration(0.0004), "400µs")
        XCTAssertEqual(Format.duration(0.120), "120ms")
        XCTAssertEqual(Format.duration(1.25), "1.25s")
        XCTAssertEqual(Format.duration(187), "3m07s")
        XCTAssertEqual(Format.time(Fixtures.epoch.addingTimeInterval(0.25), in: Fixtures.utc, milliseconds: true), "09:30:00.250")
        XCTAssertEqual(Format.time(Fixtures.epoch, in: TimeZone(secondsFromGMT: 3600)!), "10:30:00")
        // The day's edges, and a time before 1970 (the seconds of the day wrap around).
        let utc = Fixtures.utc
        XCTAssertEqual(Format.time(Date(timeIntervalSince1970: 0), in: utc, milliseconds: true), "00:00:00.000")
        XCTAssertEqual(Format.time(Date(timeIntervalSince1970: 86_399.9995), in: utc, milliseconds: true), "23:59:59.999")
        XCTAssertEqual(Format.time(Date(timeIntervalSince1970: -1), in: utc, milliseconds: true), "23:59:59.000")
        XCTAssertEqual(Format.time(Date(timeIntervalSince1970: 45_296.125), in: utc, milliseconds: true), "12:34:56.125")
        XCTAssertEqual(Format.time(Date(timeIntervalSince1970: 45_296.5), in: TimeZone(secondsFromGMT: -3600)!), "11:34:56")
        XCTAssertEqual(Format.pathAndQuery(of: "https://h.example/a/b?c=1"), "/a/b?c=1")
        XCTAssertEqual(Format.pathAndQuery(of: "https://h.example"), "/")
        XCTAssertEqual(Format.displayPath(of: "https://h.example/v1/caf%C3%A9?q=%E2%9C%93"), "/v1/café?q=✓")
        XCTAssertEqual(Format.displayPath(of: "https://h.example/bad%FF"), "/bad%FF")
    }

    /// The digit helpers stand in for `String(format:)`, so they are held
    /// to its text: random values, every tie of a byte count in KiB and MiB
    /// (exact in binary, so printf rounds them half to even), values a hair
    /// either side of a decimal tie, negatives and zero padding past width.
    func testDigitHelpersWriteWhatStringFormatWrites() {
        var rng = SystemRandomNumberGenerator()
        var values: [Double] = (0..<20_000).map { _ in Double.random(in: 0..<100, using: &rng) }
        values += (0..<4096).map { Double($0) / 1024 } + (0..<2048).map { Double($0 * 5) / 1000 }
        values += [0.05, 0.15, 0.25, 1.005, 2.675, 0.0005, 9.995, 9.9951, 59.95, 1e-9, 0]
        values += values.map { $0.nextUp } + values.map { $0.nextDown }
        for value in values {
            for decimals in 1...3 {
                XCTAssertEqual(Format.fixed(value, decimals: decimals), String(format: "%.\(decimals)f", value), "\(value), \(decimals)")
            }
        }
        XCTAssertEqual(Format.fixed(-1.25, decimals: 1), "-1.2")
        for value in [0, 7, 42, 999, 1000, 123_456, -5, -42, -1000] {
            for width in 1...4 {
                XCTAssertEqual(Format.zeroPadded(value, width: width), String(format: "%0\(width)d", value), "\(value), \(width)")
            }
        }
        XCTAssertEqual(Format.size(1280), String(format: "%.1f KiB", 1.25), "a tie rounds half to even, as printf does")
        XCTAssertEqual(Format.timestamp(Fixtures.epoch, in: TimeZone(secondsFromGMT: -(5 * 3600 + 30 * 60))!).suffix(9), "UTC-05:30")
    }
}
