import Foundation
import XCTest
@testable import WireProtocol

/// ``Boxed`` keeps a flow's rare parts behind a pointer; these pin that it
/// still behaves as the optional it replaced.
final class BoxedTests: XCTestCase {
    private func call(messages count: Int) -> GRPCCall {
        let message = GRPCMessage(direction: .response, at: 0.001, body: CapturedBody(data: Data([1, 2, 3]), size: 3, isTruncated: false))
        return GRPCCall(service: "echo.Echo", method: "Expand", kind: .serverStreaming, messages: Array(repeating: message, count: count))
    }

    func testANilPartTakesOnePointerAndAFlowIsSmallerForIt() {
        XCTAssertEqual(MemoryLayout<Boxed<GRPCCall>>.size, MemoryLayout<Int>.size)
        XCTAssertEqual(MemoryLayout<Boxed<FlowChanges>>.size, MemoryLayout<Int>.size)
        XCTAssertLessThan(MemoryLayout<NetworkLog>.size, MemoryLayout<GRPCCall?>.size + MemoryLayout<FlowChanges?>.size + 300,
                          "the gRPC call and the changes are inline again")
    }

    func testACopyKeepsItsOwnValueWhenTheOtherChangesInPlace() {
        var log = Fixtures.log
        log.grpc = call(messages: 1)
        let copy = log
        log.grpc?.messages.append(call(messages: 1).messages[0])
        log.error = FlowError(domain: "d", code: 1, message: "m")
        XCTAssertEqual(log.grpc?.messages.count, 2)
        XCTAssertEqual(copy.grpc?.messages.count, 1)
        XCTAssertNil(copy.error)
        XCTAssertNotEqual(log, copy)
        log.grpc?.messages.removeLast()
        log.error = nil
        XCTAssertEqual(log, copy)
    }

    /// A stream's messages are appended one by one to the flow's call
    /// (`log.grpc?.messages.append`): the value must be taken out of its box
    /// to be changed, so that what it holds is uniquely referenced and grows
    /// where it is. Read out and written back instead, every append would
    /// copy the whole array.
    func testAChangeInPlaceFindsTheValueUniquelyReferenced() {
        var boxed = Boxed(wrappedValue: Holder())
        XCTAssertEqual(boxed.wrappedValue?.isUnique(), true)
        let copy = boxed
        XCTAssertEqual(boxed.wrappedValue?.isUnique(), false, "shared with the copy's box")
        XCTAssertNotNil(copy.wrappedValue)
    }

    func testItIsWrittenAsTheOptionalItHolds() throws {
        var log = Fixtures.log
        log.error = nil
        log.changes = nil
        log.grpc = nil
        let bare = try JSONSerialization.jsonObject(with: log.jsonLine()) as? [String: Any]
        XCTAssertNotNil(bare?["request"])
        for key in ["error", "changes", "grpc"] { XCTAssertNil(bare?[key], "\(key) written while nil") }
        XCTAssertEqual(try NetworkLog(jsonLine: log.jsonLine()), log)

        log.grpc = call(messages: 2)
        log.error = FlowError(domain: "NSURLErrorDomain", code: -1001, message: "timed out")
        log.changes = FlowChanges(rules: ["mock"])
        let full = try JSONSerialization.jsonObject(with: log.jsonLine()) as? [String: Any]
        for key in ["error", "changes", "grpc"] { XCTAssertNotNil(full?[key], "\(key) missing") }
        XCTAssertEqual(try NetworkLog(jsonLine: log.jsonLine()), log)
        let finished = Message.flowFinished(Fixtures.flowFailed)
        XCTAssertEqual(try Message.decode(payload: finished.payload()), finished)
    }
}

private final class Token: Sendable {}

private struct Holder: Sendable {
    var token = Token()
    mutating func isUnique() -> Bool { isKnownUniquelyReferenced(&token) }
}
