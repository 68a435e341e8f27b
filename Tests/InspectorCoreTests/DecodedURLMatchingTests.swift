import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// Filters and search match a URL as the list shows it (percent-decoded)
/// and still in its raw form.
final class DecodedURLMatchingTests: XCTestCase {
    func testFilterAndSearchMatchTheDecodedURL() {
        var state = AppState(size: Fixtures.wide, timeZone: Fixtures.utc)
        let url = "http://127.0.0.1:8765/api/search?q=caf%C3%A9+cr%C3%A8me"
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [.flowStarted(Fixtures.started(1, url: url)),
                                                                         .flowStarted(Fixtures.started(2))]), at: Fixtures.epoch))
        XCTAssertTrue(state.screen().contains("/api/search?q=café crème"), state.screen())
        for (key, text) in [("f", "café"), ("f", "~u café crème"), ("/", "café"), ("f", "~u caf%C3%A9")] {
            state.press("c")
            state.enter(text, after: key)
            XCTAssertEqual(state.rows.count, 1, "\(key) \(text)")
        }
        state.press("c")
        state.enter("~u nothing-like-it", after: "f")
        XCTAssertEqual(state.rows.count, 0)
        var forms = Fixtures.mixedState()
        forms.enter("~bq Zoë", after: "f")
        XCTAssertEqual(forms.rows.count, 1, "a form body matches as decoded")
    }
}
