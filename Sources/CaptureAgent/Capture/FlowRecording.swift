import Foundation
import Synchronization
import WireProtocol

/// One flow's lifecycle, the same for every adapter: whether the flow is
/// built, its recorder, its phase (started, responded, finished) and the
/// lock around them. An adapter reports each part of the exchange as it
/// sees it (the start, the response head, body bytes, a gRPC message, the
/// end) and this type makes and sends each event exactly once, in order,
/// or, for a flow that is not built, counts it instead.
///
/// A flow is built when it starts while an inspector is connected (or
/// every flow becomes a span), or when the adapter says it must be (the
/// viewer's control needs the log); that is decided once, and so is whether
/// its bodies' bytes also go out as they pass (`bodyPart`, for a viewer
/// that reads version 2). A flow that is
/// not built makes no recorder and no copies; its events are counted as
/// dropped when it ends (produced = shown + counted), and it stays unbuilt
/// if an inspector connects meanwhile, so no inspector gets a flow's later
/// events without its start.
///
/// Thread-safe: a built flow's events are made and sent under its lock (one
/// acquisition per event), so a flow's events leave in the order they
/// happened whichever threads report them; an unbuilt flow takes no lock.
///
/// ```swift
/// let flow = FlowRecording(agent: agent) { id in
///     FlowRecorder(id: id, method: "GET", url: "http://svc/items", headers: [], sessionID: 1, taskID: 1,
///                  configuration: agent.configuration, clock: agent.clock)
/// }
/// flow.respond { $0.received(statusCode: 200, headers: [], mimeType: nil) }
/// flow.responseBody(bytes)   // a `bodyPart` too, for a version-2 viewer, unless it completes the body
/// flow.finish { recorder, parts in recorder.finished(state: .completed, error: nil, requestBody: parts.requestBody) }
/// ```
package final class FlowRecording: @unchecked Sendable {
    /// The flow's id, known before its recorder is built: what holds,
    /// replays and a handler's calls (`parentID`) name it by.
    package let id: FlowID
    /// Whether the flow builds its events (decided once, as it starts).
    package let isBuilt: Bool
    private let agent: CaptureAgent
    /// A built flow's lock; an unbuilt flow keeps only ``ledger``.
    private let lock: NSLock?
    /// Behind `lock`; only built flows touch it.
    private var state: State
    /// An unbuilt flow's phase and the events it would have sent.
    private let ledger = Atomic<UInt64>(0)

    private struct State {
        var recorder: FlowRecorder?
        var started = false
        var requestEnded = false
        var responded = false
        var finished = false
        /// Whether the flow sends its bodies' parts as they pass
        /// (`bodyPart`): built while the viewer reads protocol version 2.
        /// Otherwise its bodies come whole with its end, as a version-1
        /// viewer reads them; an unbuilt flow makes no parts, so its ledger
        /// has none to count. See ``streamsParts(_:)``.
        var streamsParts: Bool
        var requestBody: BodyCapture
        /// The request body was recorded whole: parts seen later add nothing.
        var requestBodyIsWhole = false
        var keptMessages = 0
        var droppedMessages = 0
    }

    /// What the flow gathered besides its recorder, for its final event.
    package struct Parts {
        /// The request body as its parts went by; nil when none did.
        package var requestBody: CapturedBody?
        /// Messages past the limit, counted and not sent.
        package var droppedMessages: Int
    }

    /// A flow whose recorder ``build(_:)`` makes later (or never, when it is
    /// not built). `building`: build it whether or not an inspector is
    /// connected (the viewer's control needs its log).
    package init(agent: CaptureAgent, building: Bool = false) {
        self.agent = agent
        id = FlowID()
        let viewer = agent.recordingState
        isBuilt = building || viewer.isRecording
        lock = isBuilt ? NSLock() : nil
        state = State(streamsParts: isBuilt && viewer.streamsBodyParts,
                      requestBody: BodyCapture(limit: isBuilt ? agent.configuration.bodyCaptureLimit : 0))
    }

    /// Starts a flow: builds its recorder with `make` (given the flow's id)
    /// and sends `flowStarted`, or, unbuilt, counts it.
    package convenience init(agent: CaptureAgent, building: Bool = false, _ make: (FlowID) -> FlowRecorder) {
        self.init(agent: agent, building: building)
        guard isBuilt else {
            count { $0.start() }
            return
        }
        // No other thread sees the flow yet: no lock needed.
        let recorder = make(id)
        assert(recorder.id == id, "a flow's recorder carries the flow's id")
        state.recorder = recorder
        state.started = true
        agent.emit(recorder.started())
    }

    private func locked<Result>(_ body: (inout State) -> Result) -> Result {
        lock!.lock()
        defer { lock!.unlock() }
        return body(&state)
    }

    // MARK: - Events

    /// Makes the recorder of a built flow, as `start` describes it (nothing
    /// otherwise); ``start()`` sends it.
    package func build(_ start: FlowStart) {
        guard isBuilt else { return }
        let recorder = start.recorder(id: id, configuration: agent.configuration, clock: agent.clock)
        locked { $0.recorder = recorder }
    }

    /// Sends `flowStarted` (the first time only).
    package func start() {
        guard isBuilt else { return count { $0.start() } }
        locked { state in
            guard !state.started, !state.finished, let recorder = state.recorder else { return }
            state.started = true
            agent.emit(recorder.started())
        }
    }

    /// Sends `flowStarted` again: the request changed once it had been sent
    /// (a rule, a person's edit at a breakpoint), or gained the body read to
    /// hold it. Only a built flow's start goes again; a finished flow's never.
    package func restart() {
        guard isBuilt else { return }
        locked { state in
            guard state.started, !state.finished, let recorder = state.recorder else { return }
            agent.emit(recorder.started())
        }
    }

    /// The request has gone out whole (the first time only: later calls
    /// move nothing).
    package func requestEnded() {
        guard isBuilt else { return }
        locked { state in
            guard !state.requestEnded, !state.finished, state.recorder != nil else { return }
            state.requestEnded = true
            state.recorder!.markRequestSent()
        }
    }

    /// The response head: `make` records it and returns `flowResponse`.
    /// Only the first head counts unless `replacing` (a retry after an
    /// answered challenge, a person's edit): then each one is sent.
    /// `endingRequest`: the request counts as gone out whole from now on
    /// (``requestEnded()`` later moves nothing).
    /// Returns whether the head was taken (not after the end, nor a second
    /// one unless `replacing`).
    @discardableResult
    package func respond(replacing: Bool = false, endingRequest: Bool = false, _ make: (inout FlowRecorder) -> Message) -> Bool {
        guard isBuilt else { return count { $0.respond(replacing: replacing) } }
        return locked { state in
            guard !state.finished, replacing || !state.responded, state.recorder != nil else { return false }
            state.responded = true
            if endingRequest, !state.requestEnded {
                state.requestEnded = true
                state.recorder!.markRequestSent()
            }
            agent.emit(make(&state.recorder!))
            return true
        }
    }

    /// One message of a call (gRPC) while fewer than `limit` were kept:
    /// `make` returns its event; past the limit it is only counted, for the
    /// final event (``Parts/droppedMessages``).
    package func message(limit: Int, _ make: (FlowRecorder) -> Message) {
        guard isBuilt else { return count { $0.message(limit: limit) } }
        locked { state in
            guard !state.finished, let recorder = state.recorder else { return }
            guard state.keptMessages < limit else { return state.droppedMessages += 1 }
            state.keptMessages += 1
            agent.emit(make(recorder))
        }
    }

    /// Ends the flow once: `make` returns `flowFinished`; an unbuilt flow
    /// counts every event it did not build. `responding`: the end is also
    /// the response head when none came (a gRPC trailers-only answer), sent
    /// first. Returns whether this call ended it.
    @discardableResult
    package func finish(responding head: ((inout FlowRecorder) -> Message)? = nil,
                        _ make: (inout FlowRecorder, Parts) -> Message) -> Bool {
        guard isBuilt else {
            let unsent = count { ledger in
                if head != nil { _ = ledger.respond(replacing: false) }
                return ledger.finish()
            }
            if unsent > 0 { agent.countDropped(unsent) }
            return unsent > 0
        }
        return locked { state in
            guard !state.finished else { return false }
            if let head, !state.responded, state.recorder != nil {
                state.responded = true
                agent.emit(head(&state.recorder!))
            }
            state.finished = true
            guard state.recorder != nil else { return true }
            let parts = Parts(requestBody: state.requestBody.size > 0 ? state.requestBody.captured : nil,
                              droppedMessages: state.droppedMessages)
            agent.emit(make(&state.recorder!, parts))
            // What a finished flow kept is let go of now, whoever still holds the flow.
            state.recorder = nil
            state.requestBody = BodyCapture(limit: 0)
            return true
        }
    }

    // MARK: - Parts that make no event of their own

    /// Changes the recorder of a built flow that has not finished: `body`
    /// is not called otherwise (nil).
    @discardableResult
    package func update<Result>(_ body: (inout FlowRecorder) -> Result) -> Result? {
        guard isBuilt else { return nil }
        return locked { state in
            guard !state.finished, state.recorder != nil else { return nil }
            return body(&state.recorder!)
        }
    }

    /// Request body bytes as they go by, counted in full and kept up to the
    /// capture limit; sent at once as a `bodyPart` when the flow streams
    /// parts (``FlowRecorder/bodyPart(_:bytes:offset:)`` says which bytes make one).
    package func requestBody(_ bytes: UnsafeRawBufferPointer) {
        guard isBuilt else { return }
        locked { state in
            guard !state.finished, !state.requestBodyIsWhole else { return }
            let offset = state.requestBody.size
            let wasStreaming = state.streamsParts
            state.requestBody.append(bytes)
            guard streamsParts(&state), let recorder = state.recorder,
                  let part = recorder.bodyPart(.request, bytes: bytes, offset: offset) else { return }
            if !wasStreaming, let earlier = recorder.catchUpPart(.request, body: state.requestBody, upTo: offset) { agent.emit(earlier) }
            agent.emit(part)
        }
    }

    /// Request body bytes that went by unread (a file the kernel sends):
    /// counted, the kept body marked truncated.
    package func requestBodyUnread(_ count: Int) {
        guard isBuilt else { return }
        locked { state in
            guard !state.finished, !state.requestBodyIsWhole else { return }
            state.requestBody.skip(count)
        }
    }

    /// The whole request body as it is sent (read ahead to hold it, or a
    /// person's edit): replaces what went by, and later parts add nothing.
    package func wholeRequestBody(_ data: Data) {
        guard isBuilt else { return }
        locked { state in
            guard !state.finished else { return }
            state.requestBody = BodyCapture(limit: state.requestBody.limit)
            state.requestBody.append(data)
            state.requestBodyIsWhole = true
        }
    }

    /// Response body bytes as they go by (the recorder keeps them); sent at
    /// once as a `bodyPart` when the flow streams parts, as for the request.
    package func responseBody(_ bytes: UnsafeRawBufferPointer) {
        guard isBuilt else { return }
        locked { state in
            guard !state.finished, state.recorder != nil else { return }
            let offset = state.recorder!.responseBody.size
            let wasStreaming = state.streamsParts
            state.recorder!.receivedBody(bytes)
            guard streamsParts(&state), let part = state.recorder!.bodyPart(.response, bytes: bytes, offset: offset) else { return }
            if !wasStreaming, let earlier = state.recorder!.catchUpPart(.response, body: state.recorder!.responseBody, upTo: offset) {
                agent.emit(earlier)
            }
            agent.emit(part)
        }
    }

    /// Whether a piece of this flow's body goes out as a part: decided as
    /// the flow starts, and taken up later when the viewer's switch to
    /// version 2 came after the start. The viewer answers the agent's hello
    /// within a round trip, so an app's first request right after the agent
    /// connected (a one-shot tool wrapped by `netinspect -- COMMAND`, whose
    /// one call is the streamed completion) may begin before it. The first part after
    /// the switch is preceded by one for the bytes that went by before it
    /// (``FlowRecorder/catchUpPart(_:body:upTo:)``), so the viewer's body
    /// has no gap. The look costs a lock only while the flow does not
    /// stream, which after the switch is only a version-1 viewer's flows.
    private func streamsParts(_ state: inout State) -> Bool {
        if !state.streamsParts, agent.streamsBodyParts { state.streamsParts = true }
        return state.streamsParts
    }

    /// The flow as it stands (what a held response shows); nil when unbuilt.
    package var log: NetworkLog? {
        guard isBuilt else { return nil }
        return locked { $0.recorder?.log }
    }

    /// Runs `body` with a way to read the flow as it stands, which makes
    /// the log only if it is read (a breakpoint's filter reads it); nil for
    /// an unbuilt flow, which no breakpoint can hold.
    package func withLog<Result>(_ body: (() -> NetworkLog) -> Result) -> Result? {
        guard isBuilt else { return nil }
        return locked { state in
            guard let recorder = state.recorder else { return nil }
            return body { recorder.log }
        }
    }

    /// Whether the response head has been recorded.
    package var hasResponded: Bool {
        guard isBuilt else { return Ledger(ledger.load(ordering: .acquiring)).responded }
        return locked { $0.responded }
    }

    /// Whether the flow has ended (a later end is ignored).
    package var isFinished: Bool {
        guard isBuilt else { return Ledger(ledger.load(ordering: .acquiring)).finished }
        return locked { $0.finished }
    }

    // MARK: - An unbuilt flow's ledger

    /// Applies `change` to the ledger atomically and returns what it returned.
    private func count<Result>(_ change: (inout Ledger) -> Result) -> Result {
        var old = ledger.load(ordering: .relaxed)
        while true {
            var new = Ledger(old)
            let result = change(&new)
            let (exchanged, current) = ledger.compareExchange(expected: old, desired: new.raw, ordering: .acquiringAndReleasing)
            if exchanged { return result }
            old = current
        }
    }
}

/// An unbuilt flow's phase and the events it would have sent, in one word
/// (so it needs no lock): three flags, the messages it would have kept,
/// and its events so far.
private struct Ledger {
    private(set) var raw: UInt64

    init(_ raw: UInt64) {
        self.raw = raw
    }

    private static let startedBit: UInt64 = 1, respondedBit: UInt64 = 2, finishedBit: UInt64 = 4
    private static let messageShift: UInt64 = 8, eventShift: UInt64 = 36
    private static let field: UInt64 = (1 << 28) - 1

    var started: Bool { raw & Self.startedBit != 0 }
    var responded: Bool { raw & Self.respondedBit != 0 }
    var finished: Bool { raw & Self.finishedBit != 0 }
    private var messages: UInt64 { (raw >> Self.messageShift) & Self.field }
    private var events: Int { Int((raw >> Self.eventShift) & Self.field) }

    private mutating func addEvent() {
        if (raw >> Self.eventShift) & Self.field < Self.field { raw += 1 << Self.eventShift }
    }

    mutating func start() {
        guard !started, !finished else { return }
        raw |= Self.startedBit
        addEvent()
    }

    mutating func respond(replacing: Bool) -> Bool {
        guard !finished, replacing || !responded else { return false }
        raw |= Self.respondedBit
        addEvent()
        return true
    }

    mutating func message(limit: Int) {
        guard !finished, messages < UInt64(max(0, limit)), messages < Self.field else { return }
        raw += 1 << Self.messageShift
        addEvent()
    }

    /// Ends the flow: its events, `flowFinished` included; 0 when it had ended.
    mutating func finish() -> Int {
        guard !finished else { return 0 }
        raw |= Self.finishedBit
        return events + 1
    }
}
