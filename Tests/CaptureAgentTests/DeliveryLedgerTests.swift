import XCTest
@testable import CaptureAgent

/// Receipts count the flow messages the inspector took; the ledger turns
/// them into events, a folded message standing for all of its events.
final class DeliveryLedgerTests: XCTestCase {
    func testAReceiptCoversTheEventsOfTheFoldedMessagesItCounts() {
        var ledger = DeliveryLedger(seesUnread: false)
        ledger.wrote(messageEvents: [1, 3, 1])
        ledger.wrote(messageEvents: [2])
        XCTAssertEqual(ledger.written, 7)
        XCTAssertEqual(ledger.unconfirmedEvents, 7, "no receipt yet, over TCP: everything counts")
        ledger.receipt(messages: 1)
        XCTAssertEqual(ledger.unconfirmedEvents, 6)
        ledger.receipt(messages: 2)
        XCTAssertEqual(ledger.unconfirmedEvents, 3, "the second message stood for three events")
        ledger.receipt(messages: 1)
        XCTAssertEqual(ledger.unconfirmedEvents, 3, "an older receipt lowers nothing")
        ledger.receipt(messages: 4)
        XCTAssertEqual(ledger.unconfirmedEvents, 0)
        ledger.receipt(messages: 1_000)
        XCTAssertEqual(ledger.acknowledged, 7, "a receipt cannot claim more than was written")
    }
}
