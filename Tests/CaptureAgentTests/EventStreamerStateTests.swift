import Foundation
import WireProtocol
import XCTest
@testable import CaptureAgent

/// The life of the agent's connection to the viewer, decided by
/// ``EventStreamerState`` and driven here without a socket, a lock or a
/// clock: connecting with backoff, the hello, the viewer's answer, serving,
/// the viewer going away, drop accounting, and a stop in every phase.
final class EventStreamerStateTests: XCTestCase {
    private let socket: Int32 = 7
    private let second: UInt64 = 1_000_000_000
    private let timing = Timing(startedAt: Date(timeIntervalSince1970: 1_700_000_000))

    private func flow(_ path: String = "items") -> Message {
        .flowStarted(NetworkLog(request: Request(method: "GET", url: "http://127.0.0.1/\(path)"), timing: timing))
    }

    private func fresh(acceptsControl: Bool = false, maximumEvents: Int = 1000) -> EventStreamerState {
        EventStreamerState(limits: .init(maximumEvents: maximumEvents, maximumBytes: 64 << 20), acceptsControl: acceptsControl)
    }

    /// Plays the writer up to the hello: started, connected, greeted with `drops` reported.
    private func greeted(_ state: inout EventStreamerState, drops: Int = 0, file: StaticString = #filePath, line: UInt = #line) {
        if case .disconnected = state.phase { XCTAssertEqual(state.writerStarted(), .connect, file: file, line: line) }
        XCTAssertEqual(state.connected(), .sendHello(AgentStatus(droppedEvents: drops, queuedEvents: 0)), file: file, line: line)
        XCTAssertEqual(state.helloSent(socket: socket), .awaitAnswer(timeout: 0.05), file: file, line: line)
    }

    /// A state serving a viewer that reads `frameVersion`.
    private func serving(frameVersion: Int = 1, maximumEvents: Int = 1000) -> EventStreamerState {
        var state = fresh(maximumEvents: maximumEvents)
        greeted(&state)
        XCTAssertEqual(state.answered(frameVersion: frameVersion), .serve)
        XCTAssertEqual(state.phase, .serving(socket: socket))
        return state
    }

    // MARK: Connecting

    func testTheWriterStartsDisconnectedAndConnectsAtOnce() {
        var state = fresh()
        XCTAssertEqual(state.phase, .disconnected(backoff: 0.1))
        XCTAssertFalse(state.isConnected)
        XCTAssertEqual(state.writerStarted(), .connect)
        XCTAssertEqual(state.phase, .connecting(backoff: 0.1))
    }

    func testFailedAttemptsBackOffDoublingToTwoSecondsAndAConnectionStartsAgainFromTheFirst() {
        var state = fresh()
        XCTAssertEqual(state.writerStarted(), .connect)
        var delays: [TimeInterval] = []
        for _ in 0 ..< 7 {
            guard case .retry(let delay) = state.connectFailed() else { return XCTFail("a failed attempt waits to retry") }
            delays.append(delay)
            XCTAssertEqual(state.retryWaitEnded(), .connect)
        }
        XCTAssertEqual(delays, [0.1, 0.2, 0.4, 0.8, 1.6, 2, 2])
        greeted(&state)
        XCTAssertEqual(state.answered(frameVersion: 1), .serve)
        XCTAssertEqual(state.viewerClosed(), .close(.viewerGone))
        XCTAssertEqual(state.connectionClosed(unreadEvents: 0), .connect, "a lost viewer is looked for again at once")
        XCTAssertEqual(state.connectFailed(), .retry(after: 0.1))
    }

    func testAHelloThatCannotBeWrittenIsAFailedAttempt() {
        var state = fresh()
        XCTAssertEqual(state.writerStarted(), .connect)
        XCTAssertEqual(state.connected(), .sendHello(AgentStatus(droppedEvents: 0, queuedEvents: 0)))
        XCTAssertEqual(state.helloFailed(), .abandon(then: .retry(after: 0.1)))
        XCTAssertEqual(state.retryWaitEnded(), .connect)
        XCTAssertEqual(state.connectFailed(), .retry(after: 0.2), "the backoff goes on growing")
        XCTAssertEqual(state.currentStatistics.connections, 0)
        XCTAssertFalse(state.isConnected)
    }

    func testAListenerOfAnotherUserIsCountedEachTimeAndReportedOncePerProcess() {
        var state = fresh()
        XCTAssertTrue(state.listenerRefused(pid: 40))
        XCTAssertFalse(state.listenerRefused(pid: 40))
        XCTAssertTrue(state.listenerRefused(pid: 41))
        XCTAssertEqual(state.currentStatistics.refusedListeners, 3)
    }

    func testTheFirstAttemptIsOverOnceItFailedOrItsViewerAnswered() {
        var failing = fresh()
        XCTAssertEqual(failing.writerStarted(), .connect)
        XCTAssertFalse(failing.firstAttemptIsOver)
        _ = failing.connectFailed()
        XCTAssertTrue(failing.firstAttemptIsOver)

        var answering = fresh()
        greeted(&answering)
        XCTAssertFalse(answering.firstAttemptIsOver, "start() waits for the answer too")
        _ = answering.answered(frameVersion: 1)
        XCTAssertTrue(answering.firstAttemptIsOver)
    }

    // MARK: The hello and the answer

    func testEventsAreQueuedFromTheHelloOnAndEachConnectionIsCounted() {
        var state = fresh()
        XCTAssertEqual(state.writerStarted(), .connect)
        XCTAssertEqual(state.admission, .count)
        XCTAssertEqual(state.connected(), .sendHello(AgentStatus(droppedEvents: 0, queuedEvents: 0)))
        XCTAssertEqual(state.admission, .count, "not before the hello went out")
        _ = state.helloSent(socket: socket)
        XCTAssertEqual(state.phase, .awaitingAnswer(socket: socket, stopDeadline: nil))
        XCTAssertEqual(state.admission, .queue)
        XCTAssertTrue(state.isConnected)
        XCTAssertEqual(state.currentStatistics.connections, 1)
        XCTAssertEqual(state.currentStatistics.framesWritten, 2, "hello and status")
    }

    func testTheAnswerIsAwaited50MillisecondsOrASecondForTheRulesOfAnAgentThatAcceptsControl() {
        var plain = fresh()
        XCTAssertEqual(plain.writerStarted(), .connect)
        _ = plain.connected()
        XCTAssertEqual(plain.helloSent(socket: socket), .awaitAnswer(timeout: 0.05))

        var controlled = fresh(acceptsControl: true)
        XCTAssertEqual(controlled.writerStarted(), .connect)
        _ = controlled.connected()
        XCTAssertEqual(controlled.helloSent(socket: socket), .awaitAnswer(timeout: 1))
    }

    func testAViewerThatAnswersVersion2GetsBodyPartsAndFoldedEventsUntilItGoes() {
        var state = serving(frameVersion: 2)
        XCTAssertTrue(state.queue.foldsLaterEvents, "decided with the answer, before the first event")
        XCTAssertTrue(state.readsBodyParts)
        XCTAssertEqual(state.viewerClosed(), .close(.viewerGone))
        _ = state.connectionClosed(unreadEvents: 0)
        XCTAssertFalse(state.queue.foldsLaterEvents, "the next viewer has not said what it reads")
        XCTAssertFalse(state.readsBodyParts)

        let version1 = serving(frameVersion: 1)
        XCTAssertFalse(version1.queue.foldsLaterEvents)
        XCTAssertFalse(version1.readsBodyParts)
    }

    func testAViewerThatAsksForVersion2MidServeHasLaterEventsFoldedFromTheNextStep() {
        var state = serving(frameVersion: 1)
        XCTAssertEqual(state.nextStep(now: 0, frameVersion: 2), .waitForEvents(seconds: 0.2))
        XCTAssertTrue(state.readsBodyParts)
    }

    // MARK: Drops

    func testEventsWhileDisconnectedAreCountedAndTheNextHelloReportsThem() {
        var state = fresh()
        XCTAssertEqual(state.writerStarted(), .connect)
        XCTAssertEqual(state.admission, .count)
        state.notSent(flow())
        state.notSent(flow())
        state.notSent(.status(AgentStatus(droppedEvents: 0, queuedEvents: 0)))
        state.dropped(3)
        XCTAssertEqual(state.currentStatistics.droppedEvents, 5, "flow events only, and flows never built")
        XCTAssertEqual(state.connected(), .sendHello(AgentStatus(droppedEvents: 5, queuedEvents: 0)))
        _ = state.helloSent(socket: socket)
        _ = state.answered(frameVersion: 1)
        state.enqueue(flow(), at: 0)
        var batch: [PendingQueue.Taken] = []
        XCTAssertNil(state.takeBatch(into: &batch, now: 0), "the hello's status said 5 already")
        XCTAssertEqual(batch.count, 1)
    }

    func testDropsWhileServingGoOutInTheStatusOfTheNextWrite() {
        var state = serving(maximumEvents: 1)
        state.enqueue(flow("a"), at: 0)
        state.enqueue(flow("b"), at: 0)
        XCTAssertEqual(state.currentStatistics.droppedEvents, 1, "the full queue gave way")
        var batch: [PendingQueue.Taken] = []
        XCTAssertEqual(state.takeBatch(into: &batch, now: 0), AgentStatus(droppedEvents: 1, queuedEvents: 0))
        batch.removeAll()
        state.enqueue(flow("c"), at: 0)
        XCTAssertNil(state.takeBatch(into: &batch, now: 0), "nothing new to report")
        state.wrote(frames: 2, unencodable: 1)
        XCTAssertEqual(state.currentStatistics.framesWritten, 4)
        XCTAssertEqual(state.currentStatistics.droppedEvents, 2, "an unencodable event is a drop")
    }

    func testTheViewerGoingAwayMidServeCountsWhatItNeverConfirmedAndWhatWasStillQueued() {
        var state = serving()
        for path in ["a", "b", "c"] { state.enqueue(flow(path), at: 0) }
        XCTAssertEqual(state.currentStatistics.queuedEvents, 3)
        XCTAssertEqual(state.viewerClosed(), .close(.viewerGone))
        XCTAssertEqual(state.connectionClosed(unreadEvents: 2), .connect)
        let statistics = state.currentStatistics
        XCTAssertEqual(statistics.droppedEvents, 5)
        XCTAssertEqual(statistics.unreadEventsDropped, 2)
        XCTAssertEqual(statistics.queuedEvents, 0)
        XCTAssertEqual(state.phase, .connecting(backoff: 0.1))
        XCTAssertFalse(state.isConnected)
        XCTAssertEqual(state.admission, .count)
        XCTAssertEqual(state.connected(), .sendHello(AgentStatus(droppedEvents: 5, queuedEvents: 0)), "the next viewer hears of them")
    }

    func testAFailedWriteCountsItsEventsAndTheViewerIsGoneUnlessItReadEverything() {
        var gone = serving()
        XCTAssertEqual(gone.writeFailed(lostEvents: 4, viewerReadEverything: false), .close(.viewerGone))
        XCTAssertEqual(gone.currentStatistics.droppedEvents, 4)

        var readAll = serving()
        XCTAssertEqual(readAll.writeFailed(lostEvents: 4, viewerReadEverything: true), .close(.goodbye))
        XCTAssertEqual(readAll.connectionClosed(unreadEvents: 0), .connect)
    }

    // MARK: Stopping

    func testAStopBeforeTheWriterStartsEndsItAtOnce() {
        var state = fresh()
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.admission, .refuse)
        XCTAssertEqual(state.writerStarted(), .exit)
        XCTAssertEqual(state.phase, .stopped)
        XCTAssertTrue(state.firstAttemptIsOver, "nobody waits for an attempt that will not come")
    }

    func testAStopWhileWaitingToRetryEndsTheWriterWhenItWakes() {
        var state = fresh()
        _ = state.writerStarted()
        XCTAssertEqual(state.connectFailed(), .retry(after: 0.1))
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.phase, .stopping(deadline: second, socket: nil))
        XCTAssertTrue(state.isStopping, "the writer skips its wait")
        XCTAssertNil(state.socketToShutDown)
        XCTAssertEqual(state.retryWaitEnded(), .exit)
        XCTAssertEqual(state.phase, .stopped)
    }

    /// A state whose first attempt is under way when the app stops the agent.
    private func stoppedDuringTheAttempt() -> EventStreamerState {
        var state = fresh()
        XCTAssertEqual(state.writerStarted(), .connect)
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.phase, .stopping(deadline: second, socket: nil))
        return state
    }

    func testAStopDuringAnAttemptThatFailsEndsTheWriter() {
        var state = stoppedDuringTheAttempt()
        XCTAssertEqual(state.connectFailed(), .exit)
        XCTAssertEqual(state.phase, .stopped)
    }

    func testAStopDuringAnAttemptThatConnectsLetsTheSocketGoWithoutAHello() {
        var state = stoppedDuringTheAttempt()
        XCTAssertEqual(state.connected(), .abandon(then: .exit))
        XCTAssertEqual(state.phase, .stopped)
        XCTAssertEqual(state.currentStatistics.connections, 0)
    }

    func testAStopWhileTheHelloGoesOutSaysGoodbyeAtOnce() {
        var state = fresh()
        _ = state.writerStarted()
        _ = state.connected()
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.helloSent(socket: socket), .close(.goodbye))
        XCTAssertEqual(state.socketToShutDown, socket)
        XCTAssertEqual(state.connectionClosed(unreadEvents: 0), .exit)
        XCTAssertEqual(state.phase, .stopped)
    }

    func testAStopWhileTheAnswerIsAwaitedFlushesWhatWasQueuedOnceItIsIn() {
        var state = fresh()
        greeted(&state)
        state.enqueue(flow(), at: 0)
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.phase, .awaitingAnswer(socket: socket, stopDeadline: second))
        XCTAssertEqual(state.admission, .refuse)
        XCTAssertTrue(state.isConnected, "the connection stays up to flush")
        XCTAssertEqual(state.answered(frameVersion: 2), .serve)
        XCTAssertEqual(state.phase, .stopping(deadline: second, socket: socket))
        XCTAssertEqual(state.nextStep(now: 1, frameVersion: 2), .write, "no fold window while stopping")
        var batch: [PendingQueue.Taken] = []
        _ = state.takeBatch(into: &batch, now: 1)
        XCTAssertEqual(batch.count, 1)
        XCTAssertEqual(state.nextStep(now: 2, frameVersion: 2), .close)
        XCTAssertEqual(state.connectionClosed(unreadEvents: 0), .exit)
        XCTAssertEqual(state.currentStatistics.droppedEvents, 0)
    }

    func testAStopWhileServingWritesUntilItsDeadlineThenDropsWhatIsLeft() {
        var state = serving()
        state.enqueue(flow("a"), at: 0)
        state.enqueue(flow("b"), at: 0)
        state.stopRequested(now: 5 * second, timeout: 2)
        XCTAssertEqual(state.phase, .stopping(deadline: 7 * second, socket: socket))
        XCTAssertEqual(state.admission, .refuse)
        XCTAssertEqual(state.socketToShutDown, socket, "a writer stuck in send is shut down")
        XCTAssertEqual(state.nextStep(now: 7 * second, frameVersion: 1), .close)
        XCTAssertEqual(state.writeFailed(lostEvents: 0, viewerReadEverything: false), .close(.goodbye),
                       "a failure while stopping may be stop() shutting the socket down")
        XCTAssertEqual(state.connectionClosed(unreadEvents: 0), .exit)
        XCTAssertEqual(state.currentStatistics.droppedEvents, 2)
        XCTAssertNil(state.socketToShutDown)
    }

    func testAViewerGoneWhileStoppingEndsTheWriterInsteadOfReconnecting() {
        var state = serving()
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.viewerClosed(), .close(.viewerGone))
        XCTAssertEqual(state.connectionClosed(unreadEvents: 1), .exit)
        XCTAssertEqual(state.currentStatistics.unreadEventsDropped, 1)
    }

    func testAStopsTimeoutIsCappedAtADayAndNeverNegative() {
        var long = serving()
        long.stopRequested(now: 3, timeout: 1e12)
        XCTAssertEqual(long.phase, .stopping(deadline: 3 + 86_400 * second, socket: socket))
        var negative = serving()
        negative.stopRequested(now: 3, timeout: -1)
        XCTAssertEqual(negative.phase, .stopping(deadline: 3, socket: socket))
    }

    func testAStopAfterTheWriterEndedChangesNothing() {
        var state = fresh()
        state.stopRequested(now: 0, timeout: 1)
        _ = state.writerStarted()
        state.stopRequested(now: 0, timeout: 1)
        XCTAssertEqual(state.phase, .stopped)
        XCTAssertEqual(state.admission, .refuse)
    }
}
