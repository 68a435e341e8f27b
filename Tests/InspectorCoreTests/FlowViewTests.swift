import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

final class FlowViewTests: XCTestCase {
    private func store(_ durations: [Double]) -> FlowStore {
        var store = FlowStore()
        for (index, duration) in durations.enumerated() {
            _ = store.insert(Fixtures.started(index))
            _ = store.apply(Fixtures.finished(index, status: 200 + index, duration: duration))
        }
        return store
    }

    func testIncrementalUpdatesMatchAFullRebuild() {
        var store = FlowStore(limits: .init(maximumFlows: 50))
        let predicate: FlowView.Predicate = { record, _ in (record.log.response?.statusCode ?? 0) % 3 != 0 }
        for key in SortKey.allCases {
            for reversed in [false, true] {
                var incremental = FlowView()
                incremental.rebuild(from: store, predicate: predicate, sortKey: key, reversed: reversed)
                for number in 0..<120 {
                    incremental.apply(store.insert(Fixtures.started(number)), from: store)
                    if number % 4 != 0 {
                        let finish = Fixtures.finished(number, status: 200 + number % 7, duration: Double(number % 11) / 10)
                        incremental.apply(store.apply(finish), from: store)
                    }
                }
                var rebuilt = FlowView()
                rebuilt.rebuild(from: store, predicate: predicate, sortKey: key, reversed: reversed)
                XCTAssertEqual(incremental.rows, rebuilt.rows, "\(key) reversed: \(reversed)")
                _ = store.removeAll()
            }
        }
    }

    func testSortByDurationPutsUnfinishedFlowsLast() {
        var store = store([0.5, 0.1, 0.3])
        _ = store.insert(Fixtures.started(9))
        var view = FlowView()
        view.rebuild(from: store, predicate: nil, sortKey: .duration, reversed: false)
        XCTAssertEqual(view.rows, [1, 2, 0, 3])
    }

    func testReverseFlipsTheOrder() {
        let store = store([0.5, 0.1, 0.3])
        var view = FlowView()
        view.rebuild(from: store, predicate: nil, sortKey: .time, reversed: true)
        XCTAssertEqual(view.rows, [2, 1, 0])
    }

    func testSortKeysCycleInTheDocumentedOrder() {
        XCTAssertEqual(SortKey.time.next, .duration)
        XCTAssertEqual(SortKey.host.next, .time)
    }
}
