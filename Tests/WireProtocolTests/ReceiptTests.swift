import Foundation
import XCTest
@testable import WireProtocol

final class ReceiptTests: XCTestCase {
    func testReceiptsRoundTripOneByteAtATime() throws {
        let counts = [0, 1, 3, 65_536, Int(Int32.max) + 7]
        var stream = Data()
        for count in counts { stream.append(Receipt(events: count).frame()) }
        var decoder = ReceiptDecoder()
        var decoded: [Int] = []
        for byte in stream {
            decoder.append(contentsOf: [byte])
            while let receipt = try decoder.next() { decoded.append(receipt.events) }
        }
        XCTAssertEqual(decoded, counts)
    }

    func testTheFrameIsTheDocumentedJSON() throws {
        let frame = Receipt(events: 42).frame()
        XCTAssertEqual(Array(frame.prefix(4)), [0, 0, 0, UInt8(frame.count - 4)])
        XCTAssertEqual(String(decoding: frame.dropFirst(4), as: UTF8.self), #"{"type":"receipt","events":42}"#)
    }

    func testUnknownKindsAndFieldsAreSkipped() throws {
        var decoder = ReceiptDecoder()
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(#"{"type":"later","x":[1,2]}"#.utf8)))
        decoder.append(contentsOf: FrameEncoder.frame(payload: Data(#"{"events":5,"type":"receipt","note":"hi"}"#.utf8)))
        XCTAssertEqual(try decoder.next(), Receipt(events: 5))
        XCTAssertNil(try decoder.next())
    }

    func testMalformedReceiptsAreErrors() {
        for payload in [#"[1]"#, #"{"events":1}"#, #"{"type":"receipt","events":-1}"#, #"{"type":"receipt","events":"3"}"#, #"{"type":"receipt","events":1.5}"#, "not json"] {
            var decoder = ReceiptDecoder()
            decoder.append(contentsOf: FrameEncoder.frame(payload: Data(payload.utf8)))
            XCTAssertThrowsError(try decoder.next(), payload)
        }
        var oversized = ReceiptDecoder(maximumFrameSize: 16)
        oversized.append(contentsOf: [0, 1, 0, 0])
        XCTAssertThrowsError(try oversized.next()) { XCTAssertEqual($0 as? WireError, .frameTooLarge(length: 65_536, limit: 16)) }
    }
}
