import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A stream's parts in the agent's queue (version-2 viewers): each goes
/// out on its own as it comes, a part queued while its flow's start still
/// waits folds into it, and parts still queued when the flow's end is
/// queued are folded away, the end standing for them (it carries the whole
/// body), so a quick flow costs one frame as before.
final class BodyPartQueueingTests: XCTestCase {
    private let timing = Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))

    private struct Flow {
        var started: Message
        var response: Message
        var finished: Message
        var id: FlowID
    }

    private func flow(body: Int = 30) -> Flow {
        let log = NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1/events"), timing: timing)
        let head = Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")])
        var full = head
        full.body = CapturedBody(data: Data(repeating: 7, count: body))
        return Flow(started: .flowStarted(log),
                    response: .flowResponse(FlowResponse(id: log.id, response: head, timing: timing, redirects: [])),
                    finished: .flowFinished(FlowFinished(id: log.id, state: .completed, response: full, timing: timing)),
                    id: log.id)
    }

    private func part(of flow: Flow, offset: Int, size: Int = 10, at: Double = 0.001) -> Message {
        .bodyPart(BodyPartEvent(id: flow.id, part: BodyPart(direction: .response, at: at, offset: offset,
                                                            body: CapturedBody(data: Data(repeating: 7, count: size)))))
    }

    private func folding(maximumBytes: Int = 64 << 20) -> PendingQueue {
        var queue = PendingQueue(limits: .init(maximumEvents: 1000, maximumBytes: maximumBytes))
        queue.foldsLaterEvents = true
        return queue
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

    /// The flow's start and head are written; the stream is under way.
    private func underWay(_ flow: Flow, in queue: inout PendingQueue) {
        _ = queue.submit(flow.started)
        _ = queue.submit(flow.response)
        XCTAssertEqual(drain(&queue).taken.map(\.events), [2], "the head folded into the start")
    }

    func testEachPartGoesOutOnItsOwnAsItComes() {
        var queue = folding()
        let stream = flow()
        underWay(stream, in: &queue)
        for offset in [0, 10] {
            XCTAssertEqual(queue.submit(part(of: stream, offset: offset)), 0)
            XCTAssertEqual(queue.holdBeforeNext(now: 0), 0, "a part waits for nothing")
            let taken = drain(&queue).taken
            XCTAssertEqual(taken.map(\.events), [1])
            guard case .bodyPart(let event)? = taken.first?.message else { return XCTFail("\(taken)") }
            XCTAssertEqual(event.part.offset, offset)
        }
        _ = queue.submit(stream.finished)
        XCTAssertEqual(drain(&queue).taken.map(\.events), [1])
    }

    func testALonePartAfterIdleIsWrittenAfterTheCoalescingPauseWithoutWaitingForAnother() {
        var queue = folding()
        let stream = flow()
        underWay(stream, in: &queue)
        var schedule = WriterSchedule()
        schedule.connected(reportedDrops: 0)
        XCTAssertEqual(schedule.next(queue: queue, now: 0, stopDeadline: nil), .waitForEvents(seconds: WriterSchedule.idleCheckInterval))
        _ = queue.submit(part(of: stream, offset: 0), at: 1_000_000)
        schedule.waited(timedOut: false)
        XCTAssertEqual(schedule.next(queue: queue, now: 1_000_000, stopDeadline: nil),
                       .pause(microseconds: WriterSchedule.coalescingDelayMicroseconds))
        XCTAssertEqual(schedule.next(queue: queue, now: 2_000_000, stopDeadline: nil), .write, "nothing else came: it goes")
        var batch: [PendingQueue.Taken] = []
        XCTAssertEqual(WriterSchedule.takeBatch(from: &queue, into: &batch, now: 2_000_000, isStopping: false), 0)
        XCTAssertEqual(batch.count, 1)
    }

    func testPartsStillQueuedWhenTheEndComesAreFoldedAwayAndTheEndStandsForThem() {
        var queue = folding()
        let stream = flow(), other = flow()
        underWay(stream, in: &queue)
        underWay(other, in: &queue)
        _ = queue.submit(part(of: stream, offset: 0))
        _ = queue.submit(part(of: other, offset: 0))
        _ = queue.submit(part(of: stream, offset: 10))
        _ = queue.submit(stream.finished)
        let (taken, dropped) = drain(&queue)
        XCTAssertEqual(dropped, 0)
        XCTAssertEqual(taken.map(\.events), [1, 3], "the other flow's part, then the end standing for its two parts")
        guard case .bodyPart(let event)? = taken.first?.message, case .flowFinished(let end)? = taken.last?.message else {
            return XCTFail("\(taken)")
        }
        XCTAssertEqual(event.id, other.id)
        XCTAssertEqual(end.response?.body?.size, 30, "the end carries the whole body")
        XCTAssertEqual(queue.bytes, 0)
        XCTAssertTrue(queue.isEmpty)
    }

    func testAPartWhileTheStartStillWaitsFoldsIntoItAndSoDoesTheEnd() {
        var queue = folding()
        let quick = flow()
        _ = queue.submit(quick.started)
        _ = queue.submit(quick.response)
        _ = queue.submit(part(of: quick, offset: 0))
        XCTAssertEqual(queue.count, 1)
        _ = queue.submit(quick.finished)
        let taken = drain(&queue).taken
        XCTAssertEqual(taken.map(\.events), [4], "one frame standing for start, head, part and end")
        guard case .flowStarted(let log)? = taken.first?.message else { return XCTFail("\(taken)") }
        XCTAssertEqual(log.state, .completed)
        XCTAssertEqual(log.response?.body?.size, 30)
        XCTAssertEqual(log.parts?.count(of: .response), 1, "the part's time kept")
    }

    func testAPartOfAFlowWhoseStartWentElsewhereIsDroppedAndCounted() {
        var queue = folding()
        XCTAssertEqual(queue.submit(part(of: flow(), offset: 0)), 1)
        XCTAssertTrue(queue.isEmpty)
        // Its start queued, then dropped with the connection: the part queued after goes nowhere either.
        let stream = flow()
        _ = queue.submit(stream.started)
        XCTAssertEqual(queue.removeAll(), 1)
        XCTAssertEqual(queue.submit(part(of: stream, offset: 0)), 1)
    }

    func testPartsCutUnderPressureAndThenFoldedAwayLeaveNoBytesBehind() {
        // Room for one large part only: the older ones are cut as more come.
        var queue = folding(maximumBytes: 200 * 1024)
        let stream = flow()
        underWay(stream, in: &queue)
        for index in 0 ..< 4 { _ = queue.submit(part(of: stream, offset: index * 100_000, size: 100_000)) }
        XCTAssertGreaterThan(queue.cutMessages, 0)
        _ = queue.submit(stream.finished)
        XCTAssertEqual(queue.count, 5, "four parts folded away, the end behind them")
        let (taken, dropped) = drain(&queue)
        XCTAssertEqual(dropped, 0)
        XCTAssertEqual(taken.map(\.events), [5])
        XCTAssertEqual(queue.bytes, 0)
    }
}
