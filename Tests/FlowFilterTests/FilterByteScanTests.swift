import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter

/// Plain words are matched by scanning bytes, not by the regular expression
/// engine; both must agree on every input.
final class FilterByteScanTests: FilterTestCase {
    func testByteScanIsUsedForPlainWordsOnly() throws {
        XCTAssertTrue(try FilterPattern(regularExpression: "api.example.com").usesByteScan)
        XCTAssertTrue(try FilterPattern(regularExpression: #"\.json$"#).usesByteScan)
        XCTAssertTrue(try FilterPattern(regularExpression: "^/api").usesByteScan)
        XCTAssertTrue(try FilterPattern(regularExpression: #"cost\$"#).usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: #"\d"#).usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: "a^b").usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: "a|b").usesByteScan)
        XCTAssertFalse(try FilterPattern(regularExpression: "café").usesByteScan)
    }

    private let sampleTexts = [
        "abc", "ABC", "a\nc", "a\rc", "aéc", "a😀c", "a\u{2028}c", "a\u{85}c", "", "x", "xé", "ééx",
        "file.json", "filexjson", "file.json\n", "file.json\r\n", "file.json\n\n", "file.JSON\u{2029}",
        "/Users/1", "a-b", "a%20b", "a/b", "ac", "a\u{301}c", "/api/v1", "x/api", "\n/api",
        "cost$", "Server: nginx/1.2", "items?page=7", "ITEMS?PAGE=7&x", "\"id\": 42,", "\"ID\":42",
        "ſerver: nginx", "straße", "strasse", "\u{212A}ey", "key",
        "a\u{0B}b", "a\u{0C}b", "a\tb", "a b", "a_b", "A9", "zz", "Z-a", "[x]", "a]b", "a^b", "a\\b",
        "/v1/users/42", "/V2/USERS/7/", "/v3/users/x", "page=10\r\n", "id=", "aaaaab", "ab\u{0B}",
        "GET /api/v1/items?page=3&sort=desc", "x-request-id: 1f2e", "nginx/1.25.3", "x\u{85}",
    ]

    private let invalidUTF8: [[UInt8]] = [
        [0x61, 0xFF, 0x62], [0x61, 0xC3, 0x62], [0x61, 0xE2, 0x82, 0x63], [0x61, 0xF0, 0x9F, 0x98, 0x63],
        [0x61, 0xED, 0xA0, 0x80, 0x63], [0x61, 0xC0, 0xAF, 0x63], [0x61, 0x80, 0x80, 0x63], [0x78, 0xF4, 0x90, 0x80, 0x80],
    ]

    /// Holds `FilterPattern` to `NSRegularExpression`'s answers on every sample.
    private func assertAgreesWithEngine(_ patterns: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for pattern in patterns {
            let pattern = try XCTUnwrap(pattern)
            let ours = try FilterPattern(regularExpression: pattern)
            let engine = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            for text in sampleTexts + invalidUTF8.map({ String(decoding: $0, as: UTF8.self) }) {
                let expected = engine.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                XCTAssertEqual(ours.matches(text), expected, "/\(pattern)/ on \(text.debugDescription)", file: file, line: line)
            }
            for bytes in invalidUTF8 {
                let text = String(decoding: bytes, as: UTF8.self)
                let expected = engine.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                XCTAssertEqual(ours.matches(utf8: Data(bytes)), expected, "/\(pattern)/ on \(bytes)", file: file, line: line)
            }
        }
    }

    func testByteScanAgreesWithTheRegularExpressionEngine() throws {
        try assertAgreesWithEngine([
            "a.c", "A.C", ".", "..", "x.", ".x", #"\.json"#, "a.b", "user", #"a\-b"#, "%20", "a\\/b",
            "^/api", "^a", "c$", #"json$"#, "^$", "^.$", "^abc$", #"cost\$"#, "^", "$", "^x.", "nginx",
        ])
    }

    func testUnicodeCaseFoldingIsLeftToTheEngine() throws {
        try assertAgreesWithEngine(["é.", "straße", "strasse", "key", "server", "[a-c]{3}", "(?i)abc", "a|x"])
    }

    func testByteRegexCoversGrouplessPatterns() throws {
        for pattern in [#"items\?page=\d+$"#, #"/v[12]/"#, #"\"id\":\s*42"#, "a|b", "x{2,3}", #"[^/]+\.json"#, "a+?b"] {
            XCTAssertTrue(try FilterPattern(regularExpression: pattern).usesByteRegex, pattern)
        }
        for pattern in ["(a|b)c", #"\bword"#, "a*+b", "[[:alpha:]]", "é+", #"\p{L}"#, "[a&&b]"] {
            XCTAssertFalse(try FilterPattern(regularExpression: pattern).usesByteRegex, pattern)
        }
    }

    func testByteRegexAgreesWithTheEngine() throws {
        try assertAgreesWithEngine([
            #"items\?page=\d+$"#, #"/v[12]/users/\d+/?$"#, #"\"id\":\s*42"#, #"^/v\d/"#, "a|b|zz", "^a|b$", "|x",
            "x{2,3}", "a{2}", "a{2,}b", "a{0,1}b", "a+?b", "a*b", ".*", "^.*$", "^.+$", "a.b", #"\s"#, #"\S+"#,
            #"\w+_\w"#, #"\W"#, #"\D\d"#, "[^a]", "[^A-Z]b", "[a-c]", "[_-a]", "[Z-a]", "[]a]", "[a-]", "[.]",
            #"[\s]b"#, #"[^\s]"#, #"[\]x]"#, #"[\d-]"#, #"a\tb"#, #"page=\d+\r?$"#, "x-request-id: [0-9a-f]+",
            #"nginx/\d+\.\d+"#, "b$", "^$", "^", "$", "[^/]+$", "a\\^b", "]",
        ])
    }

    func testPrefilterIsTextEveryMatchContains() {
        func required(_ pattern: String) -> [UInt8]? {
            RegexTranslation.requiredLiteral(in: pattern).map(\.bytes)
        }
        XCTAssertEqual(required(#"items\?page=[0-9]$"#), Array("items?page=".utf8))
        XCTAssertEqual(required(#"^Server: ngin."#), Array("server: ngin".utf8))
        XCTAssertEqual(required(#"\"id\":\s*42"#), Array(#""id":"#.utf8))
        XCTAssertEqual(required("abcd?"), Array("abc".utf8))
        XCTAssertEqual(required("ab*cdef"), Array("cdef".utf8))
        XCTAssertEqual(required("xy{0,2}z"), Array("x".utf8))
        XCTAssertEqual(required("(foo|bar)bazz"), Array("bazz".utf8))
        XCTAssertEqual(required("[abc]+zz"), Array("zz".utf8))
        XCTAssertEqual(required(#"\x41bc-de"#), Array("-de".utf8))
        XCTAssertEqual(required(#"\p{L}+ok"#), Array("ok".utf8))
        XCTAssertEqual(required(#"\bword\b"#), Array("word".utf8))
        XCTAssertNil(required("foo|bar"))
        XCTAssertNil(required("(?x) a b c"))
        XCTAssertNil(required(#"\Qa|b\E"#))
        XCTAssertNil(required("[a-z]+"))
    }

    func testPrefilteredPatternsAgreeWithTheEngine() throws {
        try assertAgreesWithEngine([
            #"items\?page=[0-9]$"#, #"^server: ngin."#, #"\"id\":\s*42"#, "abcd?", "ab*c", "(foo|bar)baz",
            "[abc]+c", #"\x41bc"#, #"\bkey\b"#, "se?rver", "(?:ser)ver", #"s\w+r"#, #"stra(ss|ß)e"#,
            "j[s]on$", "file\\.json$",
        ])
    }

    func testEveryCharacterFoldingToASCIILettersIsLeftToTheEngine() {
        // ẞ folds to "ss" though its lower-case mapping is ß; ICU matches it.
        var expected: [Unicode.Scalar] = ["\u{1E9E}"]
        for value in UInt32(0x80)...0x1FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let properties = scalar.properties
            let mappings = [properties.lowercaseMapping, properties.uppercaseMapping, properties.titlecaseMapping]
            if mappings.contains(where: { $0.unicodeScalars.contains { $0.isASCII && $0.properties.isAlphabetic } }) {
                expected.append(scalar)
            }
        }
        XCTAssertTrue(expected.contains("\u{212A}"), "sanity: the Kelvin sign lower-cases to k")
        for scalar in expected {
            let bytes = Array(String(scalar).utf8)
            bytes.withUnsafeBufferPointer {
                XCTAssertTrue(ByteNeedle.foldsToASCIILetters($0, at: 0), "U+\(String(scalar.value, radix: 16, uppercase: true))")
            }
        }
        Array("é😀a".utf8).withUnsafeBufferPointer { bytes in
            XCTAssertFalse(bytes.indices.contains { ByteNeedle.foldsToASCIILetters(bytes, at: $0) })
        }
    }
}

final class HeaderSeparatorNeedleTests: XCTestCase {
    private func answer(_ pattern: String, _ name: String, _ value: String) throws -> Bool? {
        let compiled = try FilterPattern(regularExpression: pattern)
        return Array(name.utf8).withUnsafeBufferPointer { name in
            Array(value.utf8).withUnsafeBufferPointer { value in compiled.matchesHeader(name: name, value: value) }
        }
    }

    func testANeedleSpanningTheSeparatorIsAnsweredWithoutBuildingTheLine() throws {
        XCTAssertEqual(try answer("x-request-id: req-99", "X-Request-ID", "req-991"), true, "on the separator")
        XCTAssertEqual(try answer("x-request-id: req-99", "X-Request-ID", "req-1"), false)
        XCTAssertEqual(try answer("request-id: req", "X-Request-ID", "req-1"), true, "name suffix, value prefix")
        XCTAssertEqual(try answer("e: f", "Note", "a e: f"), true, "wholly inside the value")
        XCTAssertEqual(try answer(" a: b", "X", "a: b"), true, "starting on the separator's space")
        XCTAssertNil(try answer("x: y", ":authority", "y"), "a name with a colon takes the general path")
        XCTAssertNil(try answer("x: zoë", "X", "zoë"), "non-ASCII takes the general path")
    }
}
