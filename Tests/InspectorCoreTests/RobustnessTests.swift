import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// Odd sizes and random key sequences must never crash the UI core or leave
/// the cursor outside the list.
final class RobustnessTests: XCTestCase {
    private let sizes = [(0, 0), (1, 1), (10, 3), (20, 5), (79, 23), (80, 24), (300, 100)].map { Size(width: $0.0, height: $0.1) }

    func testEveryScreenRendersAtAnySize() {
        let keySequences: [[String]] = [[], ["enter"], ["enter", "2"], ["enter", "3"], ["?"], ["E"], ["f"], ["z"]]
        for keys in keySequences {
            var state = Fixtures.mixedState()
            for key in keys { state.press(key) }
            for size in sizes {
                let screen = Renderer.render(state, size: size)
                XCTAssertEqual(screen.cells.count, size.width * size.height, "\(keys) at \(size)")
            }
        }
    }

    func testRandomKeysAndEventsKeepTheStateConsistent() {
        var generator = SplitMix(seed: 42)
        let specs = Keymap.standard.bindings.map(\.key).filter { $0 != "Q" && $0 != "C-c" } + ["a", "5", "~", " "]
        var state = Fixtures.mixedState()
        var next = 100
        for step in 0..<3_000 {
            switch generator.next() % 10 {
            case 0:
                _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(next)))], at: Fixtures.epoch))
                next += 1
            case 1:
                let target = 100 + Int(generator.next() % UInt64(max(1, next - 100)))
                _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowFinished(Fixtures.finished(target, status: 200 + target % 400)))], at: Fixtures.epoch))
            case 2:
                _ = Reducer.reduce(&state, .resize(sizes[Int(generator.next() % UInt64(sizes.count))]))
            default:
                let spec = specs[Int(generator.next() % UInt64(specs.count))]
                let key = Key(spec: spec) ?? .character(spec.first!)
                let confirmsQuit = state.confirmation == .quit && key == .character("y")
                // A command line (":" then Tab-completed names) may run anything, quitting included.
                let runsCommandLine = state.prompt?.purpose == .command && key == .enter
                let effect = Reducer.reduce(&state, .key(key))
                switch runsCommandLine ? .none : effect {
                case .none: XCTAssertFalse(confirmsQuit, "step \(step)")
                case .quit: XCTAssertTrue(confirmsQuit, "step \(step)")
                case .copyToClipboard: XCTAssertTrue([Key.character("C"), .character("S"), .character("H")].contains(key), "step \(step)")
                // w and W ask for a file; Enter accepts it.
                case .exportHAR, .saveFlows: XCTAssertEqual(key, .enter, "step \(step)")
                // Enter accepts a comment.
                case .annotationsChanged: XCTAssertTrue([Key.character("m"), .character("U"), .enter].contains(key), "step \(step)")
                // Enter accepts the file of a body.
                case .writeFile: XCTAssertEqual(key, .enter, "step \(step)")
                // No app here allows control: netinspect replays itself.
                case .send: XCTAssertEqual(key, .character("r"), "step \(step)")
                case .control: XCTAssertTrue([Key.character("r"), .character("a"), .character("X")].contains(key),
                                             "only replay and breakpoint keys talk to an agent; step \(step)")
                // `A` resumes all; Enter accepts an intercept filter.
                case .batch: XCTAssertTrue([Key.character("A"), .character("I"), .enter].contains(key), "step \(step)")
                case .edit: XCTAssertTrue([Key.character("e"), .character("r"), .character("n")].contains(key), "step \(step)")
                // Enter accepts a typed rule; space and t switch one on.
                case .loadRule: XCTAssertTrue([Key.enter, .character(" "), .character("t")].contains(key), "step \(step)")
                case .rulesChanged: XCTAssertTrue([Key.character(" "), .character("t"), .character("K"), .character("J"), .character("y")].contains(key), "step \(step)")
                // Server replay has no key: only the command bar starts or stops it.
                case .startServerReplay, .stopServerReplay: XCTFail("step \(step): \(key) changed the server replay")
                }
            }
            let rows = state.rows
            if rows.isEmpty {
                XCTAssertNil(state.selection)
            } else {
                XCTAssertTrue(rows.indices.contains(state.cursor), "step \(step): cursor \(state.cursor) of \(rows.count)")
                XCTAssertEqual(state.selection, rows[state.cursor])
            }
            _ = Renderer.render(state, size: state.size)
        }
    }
}
