import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// `ignored N` appears in the status bar once a flow still under way was
/// cleared (`z`): the help and the event log say what it counts.
final class IgnoredEventsAreExplainedTests: XCTestCase {
    /// A stream under way, cleared with `z`, whose next part and end arrive.
    private func clearedMidStream() -> AppState {
        var state = StreamFixtures.state(StreamFixtures.eventStreamHead(1) + StreamFixtures.parts(1, StreamFixtures.chunk("Hel"), cuts: []))
        state.press("z", "y")
        StreamFixtures.receive([StreamFixtures.part(1, StreamFixtures.chunk("lo"), offset: 100, at: 1),
                                StreamFixtures.finish(1, body: StreamFixtures.chunk("Hel") + StreamFixtures.chunk("lo"))], into: &state, now: 12)
        return state
    }

    func testTheStatusBarCountsThemAndTheEventLogSaysWhyOnce() {
        var state = clearedMidStream()
        XCTAssertTrue(state.screen().contains("ignored 2"), state.screen())
        let explained = state.session.events.filter { $0.text.contains("no longer in the list") }
        XCTAssertEqual(explained.count, 1, state.session.events.map(\.text).joined(separator: "\n"))
        XCTAssertTrue(explained.first?.text.contains("ignored") == true, explained.first?.text ?? "")

        StreamFixtures.receive([StreamFixtures.part(1, "x", offset: 200, at: 2)], into: &state, now: 13)
        XCTAssertEqual(state.session.events.filter { $0.text.contains("no longer in the list") }.count, 1, "said once, not per event")
    }

    func testTheHelpSaysWhatEachCountOfTheStatusBarMeans() {
        let help = HelpContent.lines(for: .standard).map(\.text)
        for word in ["ignored N", "dropped N", "evicted N", "HELD N"] {
            let line = help.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(word) }
            XCTAssertNotNil(line, "\(word) is not explained in the help")
        }
        let ignored = help.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("ignored N") } ?? ""
        XCTAssertTrue(ignored.contains("cleared with z"), ignored)
    }
}
