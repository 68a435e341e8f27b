import Foundation
import XCTest
@testable import WireProtocol

/// The tree-less reader: it must accept exactly what the tree parser
/// accepts, find members by their bytes (escaped or not), and build numbers
/// exactly as `Double(String)` does.
final class JSONTapeTests: XCTestCase {
    /// Reads `body` from the document while its bytes are alive.
    private func read<T>(_ text: String, _ body: (JSONReader) throws -> T) throws -> T {
        let tape = JSONTape()
        return try Array(text.utf8).withUnsafeBufferPointer { buffer in
            try tape.load(buffer, json: 0 ..< buffer.count)
            return try tape.read { json throws(JSONFieldError) in
                do { return try body(json) } catch let error as JSONFieldError { throw error } catch { throw JSONFieldError(problem: .invalid("\(error)")) }
            }
        }
    }

    func testRejectsExactlyWhatTheTreeParserRejects() {
        let inputs = ["", "{", #"{"a":1,}"#, "[1,]", "01", "1.", "-", "1e", "1e999", "1e309", "1e+999", "1e0400", "-123e307",
                      #"{"a":1} x"#, "\"abc",
                      "\"a\u{01}b\"", #""\uD800""#, #""\uDC00x""#, #""\x""#, "tru", "NaN", String(repeating: "[", count: 65)]
        for input in inputs {
            let bytes = Array(input.utf8)
            let tree = bytes.withUnsafeBufferPointer { buffer in Result { () throws(WireError) in try JSONParser.parse(buffer) } }
            let tape = bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(WireError) in try JSONTape().load(buffer, json: 0 ..< buffer.count) }
            }
            guard case .failure(let treeError) = tree, case .failure(let tapeError) = tape else {
                return XCTFail("\(input): tree \(tree), tape \(tape)")
            }
            XCTAssertEqual(tapeError, treeError, input)
        }
        XCTAssertThrowsError(try [0x22, 0xC3, 0x28, 0x22].withUnsafeBufferPointer { try JSONTape().load($0, json: 0 ..< 4) })
    }

    func testMembersAreFoundByTheirBytesEscapedOrNot() throws {
        let text = #"{"skip":{"a":[1,{"b":2}],"c":"x"},"t\u0079pe":"status","n":-12,"s":"a\"\u00e9\ud83d\ude80"}"#
        try read(text) { json in
            XCTAssertEqual(try json.string("type"), "status", "an escaped key matches")
            XCTAssertEqual(try json.int("n"), -12)
            XCTAssertEqual(try json.string("type"), "status", "looked up again, behind the last member read")
            XCTAssertEqual(try json.string("s"), "a\"é🚀")
            XCTAssertNil(try json.member("absent"))
            XCTAssertEqual(try json.decode("skip", as: Nested.self).c, "x", "a member after a nested one")
        }
    }

    /// Lookups are hinted at the key after the last member found, or at an
    /// object's first key once the object is looked up; a hint that is
    /// wrong (the object left unread, members read out of order, another
    /// object's key) must only cost a search.
    func testLookupsFindMembersWhateverTheHintSays() throws {
        let text = #"{"a":{"x":1,"y":2},"b":[{"n":"p","v":"q"},{"v":"s","n":"r"}],"c":{"x":3},"d":4}"#
        try read(text) { json in
            XCTAssertNotNil(try json.member("a"), "looked up, left unread")
            XCTAssertEqual(try json.int("d"), 4)
            XCTAssertEqual(try json.required("c").int("x"), 3)
            XCTAssertEqual(try json.required("a").int("y"), 2, "out of order inside")
            XCTAssertEqual(try json.required("a").int("x"), 1)
            let a = try json.required("a"), c = try json.required("c")
            XCTAssertEqual(try a.int("x"), 1, "the hint is c's key x")
            XCTAssertNil(try c.member("y"))
            XCTAssertEqual(try json.array("b", of: Pair.self).map(\.text), ["pq", "rs"])
            XCTAssertEqual(try json.int("d"), 4)
        }
    }

    /// Keys are compared a few bytes at a time, the loads overlapping; a
    /// difference at any position of a key of any length must count.
    func testKeyBytesAreComparedWhateverTheirLength() {
        for count in 0 ... 40 {
            let key = (0 ..< count).map { UInt8(truncatingIfNeeded: 65 + $0) }
            XCTAssertTrue(equal(key, key), "\(count)")
            for position in 0 ..< count {
                var other = key
                other[position] ^= 0x20
                XCTAssertFalse(equal(key, other), "\(count), \(position)")
            }
        }
    }

    private func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in
            JSONDocument.equalBytes(a.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, b.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: a.count)
        } }
    }

    /// Entries keep offsets as Int32, so a document that would not fit is
    /// refused before a byte of it is read.
    func testADocumentOf2GiBOrMoreIsRefused() {
        let byte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        defer { byte.deallocate() }
        byte.initialize(to: UInt8(ascii: "{"))
        let huge = UnsafeBufferPointer(start: UnsafePointer(byte), count: Int(Int32.max))
        XCTAssertThrowsError(try JSONTape().load(huge, json: 0 ..< huge.count)) {
            XCTAssertEqual($0 as? WireError, .malformedPayload("a JSON payload of 2 GiB or more"))
        }
    }

    func testNumbersReadAsDoubleParsesThem() throws {
        var rng = SplitMix64(seed: 11)
        var texts = ["0", "-0", "1763717923.123456", "0.00025", "123456789012345678", "9007199254740993", "1e3", "2.5E-3",
                     "0.1", "-99.999", "1234567890.1234567", "4503599627370497.5"]
        for _ in 0 ..< 2000 {
            let integer = rng.next() % 10_000_000_000
            let fraction = rng.next() % 1_000_000
            texts.append("\(integer).\(String(fraction).leftPadded(to: 6))")
            // Exponents, as `description` writes small and large values, and some past the fast path's reach.
            let digits = rng.next() % 100_000_000, exponent = Int(rng.next() % 60) - 30
            texts.append("\(digits / 10_000).\(digits % 10_000)e\(exponent)")
            texts.append("-\(digits)E+\(exponent + 30)")
        }
        texts += ["2.5e-05", "1e-05", "5E-7", "1.5e22", "1.5e23", "9007199254740993e-10", "1e0", "1e-400", "1e308", "17e-0",
                  "12345678.87654321", "900719925474099.1", "90071992547409.91", "0.000000000000000001", "12345678e-8",
                  "1764312345.123456", "1764312345.1234567", "-0.0", "100000000.000000001"]
        for text in texts {
            // Near the end of the payload digits are read one by one, with
            // eight bytes or more after them eight at a time.
            let value = try read(#"{"v":\#(text)}"#) { try $0.double("v") }
            XCTAssertEqual(value, Double(text)!, text)
            let padded = try read(#"{"v":\#(text),"w":"0123456789012345"}"#) { try $0.double("v") }
            XCTAssertEqual(padded, Double(text)!, text)
        }
    }

    private struct Pair: JSONReadable {
        var text: String
        init(json: JSONReader) throws(JSONFieldError) { text = try json.string("n") + json.string("v") }
    }

    private struct Nested: JSONReadable {
        var c: String
        init(json: JSONReader) throws(JSONFieldError) { c = try json.string("c") }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
