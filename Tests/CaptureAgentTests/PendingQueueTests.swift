import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// What gives way in the agent's queue when the inspector cannot keep up:
/// bodies first, whole flows only when their metadata cannot fit, and
/// every dropped flow event counted.
final class PendingQueueTests: XCTestCase {
    private let timing = Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))

    private func upload(_ bytes: Int) -> (started: Message, finished: Message) {
        let log = NetworkLog(request: Request(method: "POST", url: "http://127.0.0.1/upload",
                                              body: CapturedBody(data: Data(repeating: 9, count: bytes))), timing: timing)
        return (.flowStarted(log), .flowFinished(FlowFinished(id: log.id, state: .completed, timing: timing)))
    }

    /// Takes everything queued, as the writer would; returns it and the drops met on the way.
    private func drain(_ queue: inout PendingQueue) -> (messages: [Message], dropped: Int) {
        var messages: [Message] = [], dropped = 0
        while true {
            let (taken, droppedNow) = queue.next()
            dropped += droppedNow
            guard let taken else { return (messages, dropped) }
            messages.append(taken.message)
        }
    }

    func testBodiesGiveWayBeforeFlowsAndKeepTheirTrueSize() {
        var queue = PendingQueue(limits: .init(maximumEvents: 1000, maximumBytes: 512 * 1024))
        let uploads = (0 ..< 40).map { _ in upload(64 * 1024) }
        var dropped = 0
        for (started, finished) in uploads {
            dropped += queue.submit(started)
            dropped += queue.submit(finished)
            XCTAssertLessThanOrEqual(queue.bytes, 512 * 1024)
        }
        XCTAssertEqual(dropped, 0, "every flow's metadata fits")
        let (messages, droppedOnTheWay) = drain(&queue)
        XCTAssertEqual(droppedOnTheWay, 0)
        XCTAssertEqual(messages.count, 80, "every event of every flow goes out")
        let bodies = messages.compactMap { message -> CapturedBody? in
            if case .flowStarted(let log) = message { log.request.body } else { nil }
        }
        XCTAssertEqual(bodies.count, 40)
        XCTAssertEqual(Set(bodies.map(\.size)), [64 * 1024], "every body keeps its true size")
        let cut = bodies.filter(\.isTruncated)
        XCTAssertEqual(cut.count, queue.cutMessages)
        XCTAssertGreaterThan(cut.count, 0)
        XCTAssertEqual(Set(cut.map(\.data.count)), [PendingQueue.keptBodyBytes])
        XCTAssertTrue(bodies.prefix(cut.count).allSatisfy(\.isTruncated), "the oldest give way first")
        XCTAssertFalse(bodies.last!.isTruncated, "the newest keep their bodies while they fit")
        XCTAssertEqual(queue.bytes, 0)
    }

    func testWholeEventsAreDroppedAndCountedOnlyWhenTheirMetadataCannotFit() {
        var queue = PendingQueue(limits: .init(maximumEvents: 10, maximumBytes: 64 * 1024 * 1024))
        var dropped = 0
        for _ in 0 ..< 15 { dropped += queue.submit(upload(10).started) }
        XCTAssertEqual(dropped, 5, "past the event bound the oldest go, counted")
        XCTAssertEqual(queue.count, 10)
        XCTAssertEqual(queue.cutMessages, 0, "no body was in the way")
    }

    /// A flow's finish queued behind its start, when the start is then
    /// dropped: sending the finish would have the inspector discard and
    /// acknowledge it, lost uncounted. It is counted instead.
    func testTheQueuedFinishOfAFlowWhoseStartWasDroppedIsCountedNotSent() {
        var queue = PendingQueue(limits: .init(maximumEvents: 2, maximumBytes: 64 * 1024 * 1024))
        let first = upload(10), second = upload(10)
        XCTAssertEqual(queue.submit(first.started), 0)
        XCTAssertEqual(queue.submit(second.started), 0)
        XCTAssertEqual(queue.submit(first.finished), 1, "the oldest, the first flow's start, gives way")
        let (messages, dropped) = drain(&queue)
        XCTAssertEqual(messages, [second.started])
        XCTAssertEqual(dropped, 1, "its finish, met on the way out")
        XCTAssertEqual(queue.submit(second.finished), 0, "the second flow's start went out: its finish follows")
        XCTAssertEqual(queue.submit(first.finished), 1, "a flow not started here is counted, not queued")
    }

    func testEmptyingAtTheEndOfAConnectionCountsItsFlowEventsAndForgetsItsFlows() {
        var queue = PendingQueue(limits: .init(maximumEvents: 100, maximumBytes: 64 * 1024 * 1024))
        let flow = upload(10)
        _ = queue.submit(flow.started)
        _ = queue.submit(.status(AgentStatus(droppedEvents: 0, queuedEvents: 0)))
        XCTAssertEqual(queue.removeAll(), 1, "the status is not a flow event")
        XCTAssertEqual(queue.bytes, 0)
        XCTAssertEqual(queue.submit(flow.finished), 1, "its start went with the old connection")
    }

    func testItsPeaksAreTheMostEverQueuedOnceItGaveWayAndOutliveEmptying() {
        var queue = PendingQueue(limits: .init(maximumEvents: 2, maximumBytes: 64 * 1024 * 1024))
        let flows = (0 ..< 3).map { _ in upload(1000) }
        for flow in flows { _ = queue.submit(flow.started) }
        XCTAssertEqual(queue.peakCount, 2, "the third start pushed the oldest out")
        let peakBytes = queue.peakBytes
        XCTAssertEqual(peakBytes, queue.bytes)
        _ = drain(&queue)
        XCTAssertEqual(queue.removeAll(), 0)
        XCTAssertEqual(queue.count, 0)
        XCTAssertEqual(queue.peakCount, 2)
        XCTAssertEqual(queue.peakBytes, peakBytes)
    }
}
