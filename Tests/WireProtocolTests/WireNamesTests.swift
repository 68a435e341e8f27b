import Foundation
import XCTest
@testable import WireProtocol

/// Closed sets of names (a message's type, a flow's state) are matched by
/// their bytes where they lie in the payload; these pin that the match is
/// exact and that escapes are resolved first.
final class WireNamesTests: XCTestCase {
    func testEveryNameMatchesItsOwnValueAndNothingElseMatches() {
        for state in FlowState.allCases {
            XCTAssertEqual(match(state.rawValue, in: FlowState.wireNames), state)
        }
        for kind in Message.Kind.allCases {
            XCTAssertEqual(match(kind.rawValue, in: Message.Kind.wireNames), kind)
        }
        for near in ["", "pendin", "pendingg", "Pending", "pending ", " pending", "flowstarted"] {
            XCTAssertNil(match(near, in: FlowState.wireNames), near)
            XCTAssertNil(match(near, in: Message.Kind.wireNames), near)
        }
    }

    func testAnEscapedStateIsReadAsItsName() throws {
        let json = #"{"type":"flowFinished","id":"6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B","state":"c\u006fmpleted","#
            + #""timing":{"startedAt":1},"redirects":[]}"#
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]) + Fixtures.frame(json: json))
        _ = try decoder.next()
        guard case .flowFinished(let finished)? = try decoder.next() else { return XCTFail("no flowFinished") }
        XCTAssertEqual(finished.state, .completed)
    }

    func testAnUnknownStateIsRefusedByName() throws {
        let json = #"{"type":"flowFinished","id":"6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B","state":"exploded","#
            + #""timing":{"startedAt":1},"redirects":[]}"#
        var decoder = MessageDecoder()
        decoder.append(contentsOf: try Fixtures.frames([.hello(Fixtures.hello)]) + Fixtures.frame(json: json))
        _ = try decoder.next()
        XCTAssertThrowsError(try decoder.next()) { error in
            guard case .malformedPayload(let reason)? = error as? WireError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("unknown state 'exploded'"), reason)
        }
    }

    private func match<Value>(_ name: String, in names: WireNames<Value>) -> Value? {
        Array(name.utf8).withUnsafeBufferPointer { names.value(named: $0) }
    }
}
