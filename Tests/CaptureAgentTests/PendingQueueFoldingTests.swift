import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A quick flow's later events fold into its queued `flowStarted` while the
/// viewer reads protocol version 2: one frame for the finished flow, standing
/// for every event folded in, in what is written and what is dropped.
final class PendingQueueFoldingTests: XCTestCase {
    private let timing = Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))

    private func flow(responseBody: Int = 0) -> (started: Message, response: Message, finished: Message) {
        let log = NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1/items"), timing: timing)
        let head = Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/plain")])
        var full = head
        full.body = CapturedBody(data: Data(repeating: 7, count: responseBody))
        var finishedTiming = timing
        finishedTiming.finished = 0.002
        return (.flowStarted(log),
                .flowResponse(FlowResponse(id: log.id, response: head, timing: timing, redirects: [])),
                .flowFinished(FlowFinished(id: log.id, state: .completed, response: full, timing: finishedTiming)))
    }

    private func drain(_ queue: inout PendingQueue) -> (taken: [PendingQueue.Taken], dropped: Int) {
        var taken: [PendingQueue.Taken] = [], dropped = 0
        while true {
            let (next, droppedNow) = queue.next()
            dropped += droppedNow
            guard let next else { return (taken, dropped) }
            taken.append(next)
        }
    }

    private func folding(maximumEvents: Int = 1000, maximumBytes: Int = 64 * 1024 * 1024) -> PendingQueue {
        var queue = PendingQueue(limits: .init(maximumEvents: maximumEvents, maximumBytes: maximumBytes))
        queue.foldsLaterEvents = true
        return queue
    }

    func testAFlowFinishedWhileItsStartWaitsGoesOutAsOneFinishedFlowStandingForItsThreeEvents() {
        var queue = folding()
        let (started, response, finished) = flow(responseBody: 100)
        for message in [started, response, finished] { XCTAssertEqual(queue.submit(message), 0) }
        XCTAssertEqual(queue.count, 1)
        let (taken, dropped) = drain(&queue)
        XCTAssertEqual(dropped, 0)
        XCTAssertEqual(taken.count, 1)
        XCTAssertEqual(taken.first?.events, 3)
        guard case .flowStarted(let log)? = taken.first?.message else { return XCTFail("\(taken)") }
        XCTAssertEqual(log.state, .completed)
        XCTAssertEqual(log.response?.statusCode, 200)
        XCTAssertEqual(log.response?.body?.size, 100)
        XCTAssertEqual(log.timing.finished, 0.002)
        XCTAssertEqual(queue.bytes, 0)
    }

    func testWithoutVersion2OrOnceTheStartIsWrittenEveryEventGoesAlone() {
        var plain = PendingQueue(limits: .init(maximumEvents: 1000, maximumBytes: 64 * 1024 * 1024))
        let first = flow()
        for message in [first.started, first.response, first.finished] { _ = plain.submit(message) }
        XCTAssertEqual(drain(&plain).taken.map(\.events), [1, 1, 1])

        var queue = folding()
        let second = flow()
        _ = queue.submit(second.started)
        XCTAssertEqual(drain(&queue).taken.count, 1, "the start is written")
        _ = queue.submit(second.response)
        _ = queue.submit(second.finished)
        let rest = drain(&queue).taken
        XCTAssertEqual(rest.map(\.events), [1, 1])
        guard case .flowFinished? = rest.last?.message else { return XCTFail("\(rest)") }
    }

    func testAHoldQueuedAfterTheStartKeepsTheFlowsEventsInOrder() {
        var queue = folding()
        let (started, response, finished) = flow()
        guard case .flowStarted(let log) = started else { return XCTFail() }
        _ = queue.submit(started)
        _ = queue.submit(.held(FlowHold(id: log.id, phase: .response, response: nil, timeout: 30)))
        _ = queue.submit(response)
        _ = queue.submit(finished)
        let kinds = drain(&queue).taken.map(\.message.kind)
        XCTAssertEqual(kinds, ["flowStarted", "held", "flowResponse", "flowFinished"])
    }

    func testAFoldedFlowDroppedForRoomCountsEveryEventItStandsFor() {
        var queue = folding(maximumEvents: 4)
        var produced = 0, dropped = 0
        for _ in 0 ..< 10 {
            let (started, response, finished) = flow()
            for message in [started, response, finished] {
                dropped += queue.submit(message)
                produced += 1
            }
        }
        let (taken, droppedOnTheWay) = drain(&queue)
        dropped += droppedOnTheWay
        XCTAssertEqual(taken.count, 4)
        XCTAssertEqual(dropped, 18, "six whole flows of three events")
        XCTAssertEqual(taken.map(\.events).reduce(0, +) + dropped, produced)
    }

    func testTheWriterHoldsAYoungStartForItsWindowOnlyWhileItsFlowCanStillFold() {
        let millisecond: UInt64 = 1_000_000
        var queue = folding()
        let first = flow(), second = flow()
        _ = queue.submit(first.started, at: 10 * millisecond)
        _ = queue.submit(second.started, at: 11 * millisecond)
        XCTAssertEqual(queue.holdBeforeNext(now: 11 * millisecond), 4 * millisecond)
        XCTAssertEqual(queue.holdBeforeNext(now: 15 * millisecond), 0, "its window is over")
        _ = queue.submit(first.finished, at: 12 * millisecond)
        XCTAssertEqual(queue.holdBeforeNext(now: 12 * millisecond), 0, "it ended: nothing more can fold")
        XCTAssertEqual(queue.next().taken?.events, 2)
        XCTAssertEqual(queue.holdBeforeNext(now: 12 * millisecond), 4 * millisecond, "the next start waits its own window")
        guard case .flowStarted(let log) = second.started else { return XCTFail() }
        _ = queue.submit(.held(FlowHold(id: log.id, phase: .request, timeout: 30)), at: 13 * millisecond)
        XCTAssertEqual(queue.holdBeforeNext(now: 13 * millisecond), 0, "a held flow is shown at once")
        queue.foldsLaterEvents = false
        _ = queue.submit(flow().started, at: 13 * millisecond)
        _ = drain(&queue)
        XCTAssertEqual(queue.holdBeforeNext(now: 13 * millisecond), 0)
    }

    func testABodyFoldedInCountsTowardTheQueuesBytesAndGivesWayLikeAnyOther() {
        var queue = folding(maximumBytes: 256 * 1024)
        var dropped = 0
        for _ in 0 ..< 20 {
            let (started, response, finished) = flow(responseBody: 64 * 1024)
            for message in [started, response, finished] { dropped += queue.submit(message) }
            XCTAssertLessThanOrEqual(queue.bytes, 256 * 1024)
        }
        XCTAssertEqual(dropped, 0, "every flow's metadata fits")
        let (taken, _) = drain(&queue)
        XCTAssertEqual(taken.count, 20)
        let bodies = taken.compactMap { taken -> CapturedBody? in
            if case .flowStarted(let log) = taken.message { log.response?.body } else { nil }
        }
        XCTAssertEqual(Set(bodies.map(\.size)), [64 * 1024], "every body keeps its true size")
        XCTAssertTrue(bodies.first!.isTruncated, "the oldest gave way")
        XCTAssertFalse(bodies.last!.isTruncated)
        XCTAssertEqual(queue.bytes, 0)
    }
}
