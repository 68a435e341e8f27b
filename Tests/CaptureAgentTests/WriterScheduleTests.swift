import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// When the agent's writer writes, waits, checks on the viewer and closes:
/// ``WriterSchedule`` driven with queues and times, no socket. (Reconnecting
/// is ``EventStreamerState``'s: `EventStreamerStateTests`.)
final class WriterScheduleTests: XCTestCase {
    private let timing = Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))
    private let millisecond: UInt64 = 1_000_000

    private func queue(maximumEvents: Int = 1000, maximumBytes: Int = 64 << 20, foldsLaterEvents: Bool = false) -> PendingQueue {
        var queue = PendingQueue(limits: .init(maximumEvents: maximumEvents, maximumBytes: maximumBytes))
        queue.foldsLaterEvents = foldsLaterEvents
        return queue
    }

    private func started(_ path: String = "items", body: Int = 0) -> NetworkLog {
        var request = Request(method: "POST", url: "http://127.0.0.1/\(path)")
        if body > 0 { request.body = CapturedBody(data: Data(repeating: 1, count: body)) }
        return NetworkLog(request: request, timing: timing)
    }

    private func finished(_ log: NetworkLog) -> Message {
        .flowFinished(FlowFinished(id: log.id, state: .completed, response: Response(statusCode: 200), timing: timing))
    }

    /// A schedule on a connection, past its first look at an empty queue
    /// when `idle` (the writer waits for events).
    private func connectedSchedule(idle: Bool = false) -> WriterSchedule {
        var schedule = WriterSchedule()
        schedule.connected(reportedDrops: 0)
        if idle { XCTAssertEqual(schedule.next(queue: queue(), now: 0, stopDeadline: nil), .waitForEvents(seconds: 0.2)) }
        return schedule
    }

    // MARK: Idle

    func testWithNothingQueuedTheWriterWaitsForEventsAndChecksTheViewerAfterEachQuietInterval() {
        var schedule = connectedSchedule(idle: true)
        let empty = queue()
        schedule.waited(timedOut: false)
        XCTAssertEqual(schedule.next(queue: empty, now: 0, stopDeadline: nil), .waitForEvents(seconds: 0.2),
                       "woken without an event: it waits on, and checks nothing")
        schedule.waited(timedOut: true)
        XCTAssertEqual(schedule.next(queue: empty, now: 0, stopDeadline: nil), .checkViewer)
        XCTAssertEqual(schedule.next(queue: empty, now: 0, stopDeadline: nil), .waitForEvents(seconds: 0.2), "one check per quiet interval")
    }

    func testAnEventArrivingAsTheWaitTimesOutIsWrittenWithoutACheck() {
        var schedule = connectedSchedule(idle: true)
        var queued = queue()
        _ = queued.submit(.flowStarted(started()))
        schedule.waited(timedOut: true)
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .pause(microseconds: 1000))
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .write)
    }

    // MARK: Coalescing

    func testTheFirstEventAfterIdleWaitsAMillisecondForTheEventsBehindItThenIsWritten() {
        var schedule = connectedSchedule(idle: true)
        var queued = queue()
        _ = queued.submit(.flowStarted(started()))
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .pause(microseconds: 1000))
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .write)
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .write, "still busy: no pause")
    }

    func testAFullBatchAfterIdleIsWrittenAtOnce() {
        var schedule = connectedSchedule(idle: true)
        var queued = queue()
        for index in 0 ..< WriterSchedule.batchMessages { _ = queued.submit(.flowStarted(started("\(index)"))) }
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .write)
    }

    func testEventsAlreadyWaitingOnANewConnectionAreWrittenWithoutAPause() {
        var schedule = connectedSchedule()
        var queued = queue()
        _ = queued.submit(.flowStarted(started()))
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .write)
    }

    // MARK: Folding

    func testAStartThatMayStillFoldWaitsTheRestOfTheWindowThenIsWritten() {
        var schedule = connectedSchedule()
        var queued = queue(foldsLaterEvents: true)
        _ = queued.submit(.flowStarted(started()), at: 10 * millisecond)
        XCTAssertEqual(schedule.next(queue: queued, now: 12 * millisecond, stopDeadline: nil), .pause(microseconds: 3001),
                       "3 ms of the 5 ms window are left")
        XCTAssertEqual(schedule.next(queue: queued, now: 15 * millisecond, stopDeadline: nil), .write)
    }

    func testTheFoldWindowIsTheLimitsOne() {
        var schedule = connectedSchedule()
        var queued = PendingQueue(limits: .init(maximumEvents: 1000, maximumBytes: 64 << 20, foldWindowNanoseconds: 500 * millisecond))
        queued.foldsLaterEvents = true
        _ = queued.submit(.flowStarted(started()), at: 10 * millisecond)
        XCTAssertEqual(schedule.next(queue: queued, now: 20 * millisecond, stopDeadline: nil), .pause(microseconds: 490_001),
                       "a benchmark under valgrind waits 500 ms, not 5")
        var batch: [PendingQueue.Taken] = []
        _ = WriterSchedule.takeBatch(from: &queued, into: &batch, now: 20 * millisecond, isStopping: false)
        XCTAssertTrue(batch.isEmpty, "nor does a batch take the start early")
        XCTAssertEqual(schedule.next(queue: queued, now: 510 * millisecond, stopDeadline: nil), .write)
    }

    func testAFinishedFlowOrAViewerWithoutVersion2NeverWaitsForAFold() {
        var schedule = connectedSchedule()
        var finishedFlow = queue(foldsLaterEvents: true)
        let log = started()
        _ = finishedFlow.submit(.flowStarted(log), at: 10 * millisecond)
        _ = finishedFlow.submit(finished(log), at: 10 * millisecond)
        XCTAssertEqual(schedule.next(queue: finishedFlow, now: 10 * millisecond, stopDeadline: nil), .write)

        var version1 = queue(foldsLaterEvents: false)
        _ = version1.submit(.flowStarted(started()), at: 10 * millisecond)
        XCTAssertEqual(schedule.next(queue: version1, now: 10 * millisecond, stopDeadline: nil), .write)
    }

    // MARK: Stopping

    func testStoppingWritesWhatIsQueuedWithoutWaitingThenCloses() {
        var schedule = connectedSchedule(idle: true)
        var queued = queue(foldsLaterEvents: true)
        _ = queued.submit(.flowStarted(started()), at: 10 * millisecond)
        let deadline = 100 * millisecond
        XCTAssertEqual(schedule.next(queue: queued, now: 10 * millisecond, stopDeadline: deadline), .write,
                       "no coalescing and no fold window while stopping")
        var batch: [PendingQueue.Taken] = []
        XCTAssertEqual(WriterSchedule.takeBatch(from: &queued, into: &batch, now: 10 * millisecond, isStopping: true), 0)
        XCTAssertEqual(batch.count, 1)
        XCTAssertEqual(schedule.next(queue: queued, now: 11 * millisecond, stopDeadline: deadline), .close)
    }

    func testStoppingPastTheDeadlineClosesWithEventsStillQueued() {
        var schedule = connectedSchedule()
        var queued = queue()
        _ = queued.submit(.flowStarted(started()))
        XCTAssertEqual(schedule.next(queue: queued, now: 100 * millisecond, stopDeadline: 100 * millisecond), .close)
    }

    func testAStopWhileIdleClosesAtOnce() {
        var schedule = connectedSchedule(idle: true)
        schedule.waited(timedOut: false)
        XCTAssertEqual(schedule.next(queue: queue(), now: 0, stopDeadline: 100 * millisecond), .close)
    }

    // MARK: Batches

    func testABatchStopsAtItsMessageBound() {
        var queued = queue()
        for index in 0 ..< 100 { _ = queued.submit(.flowStarted(started("\(index)"))) }
        var batch: [PendingQueue.Taken] = []
        _ = WriterSchedule.takeBatch(from: &queued, into: &batch, now: 0, isStopping: false)
        XCTAssertEqual(batch.count, WriterSchedule.batchMessages)
        XCTAssertEqual(queued.count, 100 - WriterSchedule.batchMessages)
    }

    func testABatchStopsOnceItPassesItsByteBoundButTakesOneLargeMessageAlone() {
        var queued = queue()
        for index in 0 ..< 3 { _ = queued.submit(.flowStarted(started("\(index)", body: WriterSchedule.batchBytes))) }
        var batch: [PendingQueue.Taken] = []
        _ = WriterSchedule.takeBatch(from: &queued, into: &batch, now: 0, isStopping: false)
        XCTAssertEqual(batch.count, 1)
        XCTAssertEqual(queued.count, 2)
    }

    func testABatchStopsAtAStartThatMayStillFold() {
        var queued = queue(foldsLaterEvents: true)
        let done = started("done")
        _ = queued.submit(.flowStarted(done), at: 0)
        _ = queued.submit(finished(done), at: 0)
        _ = queued.submit(.flowStarted(started("open")), at: 10 * millisecond)
        var batch: [PendingQueue.Taken] = []
        _ = WriterSchedule.takeBatch(from: &queued, into: &batch, now: 11 * millisecond, isStopping: false)
        XCTAssertEqual(batch.map(\.events), [2], "the finished flow goes; the open one waits for its end")
        XCTAssertEqual(queued.count, 1)
    }

    func testABatchCountsTheLaterEventsOfAFlowWhoseStartWasDropped() {
        var queued = queue(maximumEvents: 2)
        let first = started("first")
        XCTAssertEqual(queued.submit(.flowStarted(first)), 0)
        XCTAssertEqual(queued.submit(finished(first)), 0)
        XCTAssertEqual(queued.submit(.flowStarted(started("second"))), 1, "the oldest start gives way")
        var batch: [PendingQueue.Taken] = []
        XCTAssertEqual(WriterSchedule.takeBatch(from: &queued, into: &batch, now: 0, isStopping: false), 1,
                       "the end of the dropped flow is dropped too, and counted")
        XCTAssertEqual(batch.count, 1)
    }

    // MARK: Status

    func testAStatusGoesWithAWriteOnlyWhenTheDropCountChanged() {
        var schedule = WriterSchedule()
        schedule.connected(reportedDrops: 3)
        XCTAssertFalse(schedule.statusDue(droppedEvents: 3), "the connection's first status said 3")
        XCTAssertTrue(schedule.statusDue(droppedEvents: 5))
        XCTAssertFalse(schedule.statusDue(droppedEvents: 5))
        schedule.connected(reportedDrops: 9)
        XCTAssertFalse(schedule.statusDue(droppedEvents: 9), "a new connection starts from its own first status")
    }

    // MARK: Reconnecting

    func testAReconnectionAfterTheViewerWentAwayStartsIdleWithoutAStaleCheck() {
        var schedule = connectedSchedule(idle: true)
        schedule.waited(timedOut: true)
        // The viewer went away: the writer reconnects before it checked.
        schedule.connected(reportedDrops: 0)
        XCTAssertEqual(schedule.next(queue: queue(), now: 0, stopDeadline: nil), .waitForEvents(seconds: 0.2))
        var queued = queue()
        _ = queued.submit(.flowStarted(started()))
        XCTAssertEqual(schedule.next(queue: queued, now: 0, stopDeadline: nil), .pause(microseconds: 1000))
    }
}
