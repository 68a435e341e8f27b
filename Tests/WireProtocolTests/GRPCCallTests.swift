import Foundation
import XCTest
@testable import WireProtocol

final class GRPCCallTests: XCTestCase {
    func testStatusNamesFollowGRPCsCodes() {
        XCTAssertEqual(GRPCStatus(code: 0).name, "OK")
        XCTAssertEqual(GRPCStatus(code: 5).name, "NOT_FOUND")
        XCTAssertEqual(GRPCStatus(code: 16).name, "UNAUTHENTICATED")
        XCTAssertEqual(GRPCStatus(code: 17).name, "CODE_17")
        XCTAssertEqual(GRPCStatus(code: -1).name, "CODE_-1")
        XCTAssertEqual(GRPCStatus.code(named: "deadline_exceeded"), 4)
        XCTAssertNil(GRPCStatus.code(named: "NOPE"))
    }

    func testEventsFoldIntoTheCallInOrder() {
        var log = Fixtures.grpcLog
        log.apply(Fixtures.grpcRequestMessage)
        log.apply(Fixtures.grpcResponseMessage)
        log.apply(Fixtures.grpcFinished)
        let call = try? XCTUnwrap(log.grpc)
        XCTAssertEqual(call?.messages.map(\.direction), [.request, .response])
        XCTAssertEqual(call?.messages.map(\.body.size), [5, 3])
        XCTAssertEqual(call?.status, GRPCStatus(code: 5, message: "no such word"))
        XCTAssertEqual(call?.trailers, [HTTPHeader(name: "grpc-status", value: "5")])
        XCTAssertEqual(call?.droppedMessages, 2)
        XCTAssertEqual(log.state, .completed)
    }

    func testMessagesForAFlowThatIsNoCallAreIgnored() {
        var log = Fixtures.log
        log.apply(GRPCMessageEvent(id: log.id, message: Fixtures.grpcRequestMessage.message))
        log.apply(Fixtures.grpcFinished)
        XCTAssertNil(log.grpc)
    }
}
