import XCTest
@testable import CaptureAgent

/// The agent's event queue type: first in, first out, through the
/// compactions that keep `removeFirst()` cheap.
final class FIFOTests: XCTestCase {
    func testOrderAndCountsThroughCompactions() {
        var queue = FIFO<Int>()
        var model: [Int] = []
        var next = 0
        // Grow and drain unevenly so the front passes the compaction
        // threshold many times, with elements still behind it.
        for round in 0 ..< 200 {
            for _ in 0 ..< (round % 7) * 20 + 3 {
                queue.append(next)
                model.append(next)
                next += 1
            }
            for _ in 0 ..< min(model.count, (round % 5) * 25 + 1) {
                XCTAssertEqual(queue.removeFirst(), model.removeFirst())
            }
            XCTAssertEqual(queue.count, model.count)
            XCTAssertEqual(queue.isEmpty, model.isEmpty)
            if let last = model.last { XCTAssertEqual(queue[queue.count - 1], last) }
            if let first = model.first { XCTAssertEqual(queue[0], first) }
        }
        while !model.isEmpty { XCTAssertEqual(queue.removeFirst(), model.removeFirst()) }
        XCTAssertTrue(queue.isEmpty)
        queue.append(1)
        queue.removeAll()
        XCTAssertEqual(queue.count, 0)
    }

    /// A removed element is released at once, not when the front is compacted.
    func testRemovedElementsAreReleased() {
        final class Token {}
        var queue = FIFO<Token>()
        weak var first: Token?
        do {
            let token = Token()
            first = token
            queue.append(token)
            queue.append(Token())
            queue.append(Token())
        }
        XCTAssertNotNil(first)
        queue.removeFirst()
        XCTAssertNil(first, "the queue still held the removed element")
        XCTAssertEqual(queue.count, 2)
    }
}
