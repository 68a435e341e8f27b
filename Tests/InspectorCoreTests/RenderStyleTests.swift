import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

/// What text snapshots cannot show: the styles the palette will colour.
final class RenderStyleTests: XCTestCase {
    private func styles(inRowContaining text: String, of screen: Screen) -> Set<Style> {
        guard let row = (0..<screen.size.height).first(where: { screen.text(ofRow: $0).contains(text) }) else { return [] }
        return Set((0..<screen.size.width).map { screen[row, $0].style })
    }

    func testStatusCodesAreStyledByClassAndStatesAsSuch() {
        var state = Fixtures.mixedState()
        state.press("g")
        let screen = Renderer.render(state, size: .minimum)
        XCTAssertTrue(styles(inRowContaining: "/v1/missing", of: screen).contains(.status4xx))
        XCTAssertTrue(styles(inRowContaining: "/login", of: screen).contains(.status5xx))
        XCTAssertTrue(styles(inRowContaining: "/timeout", of: screen).contains(.failed))
        XCTAssertTrue(styles(inRowContaining: "/v1/items/9", of: screen).contains(.pending))
        XCTAssertEqual(styles(inRowContaining: "/v1/items/1?", of: screen), [.selected])
    }

    func testRunningFlowsShowTheirAgeAgainstTheInjectedClock() {
        var state = Fixtures.mixedState()
        XCTAssertTrue(Renderer.render(state, size: .minimum).text(ofRow: 6).trimmingCharacters(in: .whitespaces).hasSuffix("…"))
        _ = Reducer.reduce(&state, .tick(Fixtures.epoch.addingTimeInterval(6 + 2.5)))
        let row = Renderer.render(state, size: .minimum).text(ofRow: 6)
        XCTAssertTrue(row.contains("/v1/items/9") && row.contains("2.50s…"), row)
    }

    func testBodySearchMatchesAreHighlighted() {
        var state = Fixtures.mixedState()
        state.press("g", "enter", "2")
        state.enter("price", after: "/")
        let screen = Renderer.render(state, size: .minimum)
        XCTAssertTrue(styles(inRowContaining: "\"price\"", of: screen).contains(.match))
    }

    func testJSONTokensAreColoured() {
        var state = Fixtures.mixedState()
        state.press("g", "enter", "2")
        let screen = Renderer.render(state, size: .minimum)
        XCTAssertTrue(styles(inRowContaining: "\"ok\": true", of: screen).isSuperset(of: [.jsonKey, .jsonLiteral]))
    }

    func testEveryStyleLooksDifferentFromNormalWithoutColoursWhereItMatters() {
        for style in [Style.selected, .statusBar, .tabActive, .match, .error, .failed] {
            XCTAssertNotEqual(Palette.monochrome[style], Appearance(), "\(style) vanishes on a monochrome terminal")
        }
    }
}
