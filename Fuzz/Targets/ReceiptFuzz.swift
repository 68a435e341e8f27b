// libFuzzer target: what an agent reads back from a viewer (receipts) over
// arbitrary bytes cut into arbitrary chunks. Built by Fuzz/run.sh against
// the instrumented WireProtocol module.

@testable import WireProtocol
import Foundation

/// Invariants checked on every input:
/// - no crash, no trap, no unbounded buffering (at most one frame plus its
///   prefix plus one chunk is ever held);
/// - every receipt decoded has a non-negative count and re-encodes to a
///   frame that decodes to the same receipt.
@_cdecl("LLVMFuzzerTestOneInput")
public func receiptFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    guard let first = input.first else { return 0 }
    let chunkSize = Int(first % 64) + 1
    let limit = 1024
    var decoder = ReceiptDecoder(maximumFrameSize: limit)
    var offset = 1
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        decoder.append(contentsOf: input[offset..<end])
        offset = end
        while true {
            do {
                guard let receipt = try decoder.next() else { break }
                precondition(receipt.events >= 0, "negative receipt")
                var again = ReceiptDecoder()
                again.append(contentsOf: receipt.frame())
                let reread = try again.next()
                precondition(reread == receipt, "re-encoding changed the receipt")
            } catch {
                // The agent ends the connection at the first error.
                return 0
            }
        }
    }
    return 0
}
