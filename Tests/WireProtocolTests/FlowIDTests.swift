import Foundation
import XCTest
@testable import WireProtocol

/// Flow ids are minted without a system call; they must still be unique,
/// well-formed random-style UUIDs whose short form tells flows apart.
final class FlowIDTests: XCTestCase {
    func testIdsFromManyThreadsAreAllDistinct() {
        let perThread = 50_000, threads = 4
        // Each thread fills its own slot, so the minting is all that is shared.
        var minted = [[UUID]](repeating: [], count: threads)
        minted.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let slots = slots
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                slots[thread] = (0..<perThread).map { _ in FlowID().uuid }
            }
        }
        XCTAssertEqual(Set(minted.joined()).count, perThread * threads)
    }

    func testIdsAreVersion4WithTheRFCVariant() {
        for _ in 0..<1000 {
            let text = Array(FlowID().description)
            XCTAssertEqual(text[14], "4", String(text))
            XCTAssertTrue("89AB".contains(text[19]), String(text))
            XCTAssertNotNil(FlowID(String(text)), "reads back")
        }
    }

    /// `--dump` and the list show an id's first eight characters.
    func testConsecutiveIdsDifferInTheirShortForm() {
        let prefixes = (0..<10_000).map { _ in FlowID().description.prefix(8) }
        XCTAssertGreaterThanOrEqual(Set(prefixes).count, 9_990)
    }

    func testTheScrambleKeepsSixtyBitsAndLosesNoValue() {
        let values = (0..<UInt64(100_000)).map { FlowID.Minting.scrambled($0 * 0x1_0000_0001 & ((1 << 60) - 1)) }
        XCTAssertEqual(Set(values).count, values.count)
        XCTAssertTrue(values.allSatisfy { $0 < 1 << 60 })
    }
}
