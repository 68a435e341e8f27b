import FlowFilter
import Foundation
import InspectorIngest
import WireProtocol

/// Flows being sent again, many at once (`:replay.client FILTER COUNT
/// CONCURRENCY`, Charles' Repeat Advanced, FILTER also `@marked`, `@shown`, `@all`; `r` on the marked flows): each
/// send goes by ``Reducer/replayRoute(_:in:)``, at most `concurrency` in
/// flight, and each result is known by its flow's `changes.replayOf` as it
/// arrives, whichever client sent it.
struct ReplayJob: Sendable, Equatable {
    /// Where a send went, and the flow it replays.
    struct Send: Hashable, Sendable {
        var origin: FlowID
        var connection: ConnectionID
    }

    /// Flows still to send, in order; a flow repeated appears once per time.
    var queue: [Int]
    /// The most sends in flight at once.
    var concurrency: Int
    /// Sends made whose flow has not arrived yet.
    var awaiting: [Send: Int] = [:]
    /// The flows of sends that arrived and are not finished, with their connection.
    var running: [FlowID: ConnectionID] = [:]
    var sent = 0
    var finished = 0
    var failed = 0
    /// Flows netinspect cannot send without the person filling in redacted values.
    var skipped = 0

    var inFlight: Int { awaiting.values.reduce(0, +) + running.count }
    var isDone: Bool { queue.isEmpty && inFlight == 0 }

    /// "12 sent: 11 finished, 1 failed"
    var summary: String {
        var text = "\(sent) sent: \(finished) finished, \(failed) failed"
        if skipped > 0 { text += "; \(skipped) not sent (redacted values: r on each fills them in)" }
        return text
    }
}

extension Reducer {
    /// The most repetitions one `:replay.client` makes.
    static let replayCountLimit = 10_000

    /// `:replay.client FILTER [COUNT] [CONCURRENCY]`.
    static func replayClient(_ argument: String?, in state: inout AppState) -> Effect {
        let usage = "replay.client needs FILTER [COUNT] [CONCURRENCY], e.g. replay.client ~d api.example.com 10 2"
        guard let argument, !argument.isEmpty else {
            state.notice = Notice(text: usage, isError: true)
            return .none
        }
        let parsed: (ReplayTarget, count: Int, concurrency: Int)
        switch parseReplayArguments(argument) {
        case .success(let value): parsed = value
        case .failure(let problem):
            state.notice = Notice(text: problem.text + "; " + usage, isError: true)
            return .none
        }
        let (target, count, concurrency) = parsed
        let store = state.session.store
        let targets: [Int]
        switch target {
        case .selection(let selection):
            targets = state.flows(selection).filter { store[$0]?.isDeleted == false }
        case .filter(let filter):
            targets = store.sequenceRange.filter { sequence in
                guard let record = store[sequence], !record.isDeleted else { return false }
                return filter.matches(record.log, marked: record.annotation.isMarked, comment: record.annotation.comment,
                                      origin: store.origin(of: record), parent: { store.parent(of: $0) })
            }
        }
        guard !targets.isEmpty else {
            state.notice = Notice(text: "No flow matches \(argument): nothing replayed", isError: true)
            return .none
        }
        return startReplayJob(targets, count: count, concurrency: concurrency, in: &state)
    }

    struct ArgumentProblem: Error {
        var text: String
    }

    /// The flows `:replay.client` replays: those a filter matches, or a
    /// selection as `:replay` takes (`@marked`, `@shown`, `@all`).
    enum ReplayTarget {
        case filter(FilterExpression)
        case selection(FlowSelection)
    }

    /// FILTER, then up to two numbers: a trailing number belongs to the
    /// filter when the filter needs it (`~c 200`).
    static func parseReplayArguments(_ text: String) -> Result<(ReplayTarget, count: Int, concurrency: Int), ArgumentProblem> {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        var problem: ArgumentProblem?
        for numbers in stride(from: min(2, words.count - 1), through: 0, by: -1) {
            let tail = words.suffix(numbers)
            guard tail.allSatisfy({ Int($0) != nil }) else { continue }
            var filterText = words.dropLast(numbers).joined(separator: " ")
            if filterText.count >= 2, let quote = filterText.first, quote == "'" || quote == "\"", filterText.last == quote {
                filterText = String(filterText.dropFirst().dropLast())
            }
            let target: ReplayTarget
            if let selection = FlowSelection(rawValue: filterText) {
                target = .selection(selection)
            } else {
                do {
                    target = .filter(try FilterExpression.parse(filterText))
                } catch {
                    // The reading with the most numbers is the one to explain.
                    problem = problem ?? ArgumentProblem(text: "Invalid filter \"\(filterText)\" at column \(error.offset + 1): \(error.message)")
                    continue
                }
            }
            let values = tail.map { Int($0) ?? 0 }
            let count = values.first ?? 1
            let concurrency = values.count > 1 ? values[1] : 1
            guard (1...replayCountLimit).contains(count) else {
                return .failure(ArgumentProblem(text: "COUNT must be 1 to \(replayCountLimit), not \(tail.first ?? "")"))
            }
            guard concurrency >= 1 else { return .failure(ArgumentProblem(text: "CONCURRENCY must be at least 1")) }
            return .success((target, count, concurrency))
        }
        return .failure(problem ?? ArgumentProblem(text: "no filter"))
    }

    /// Sends `targets`, each `count` times, at most `concurrency` at once.
    static func startReplayJob(_ targets: [Int], count: Int, concurrency: Int, in state: inout AppState) -> Effect {
        var job = ReplayJob(queue: (0..<count).flatMap { _ in targets }, concurrency: concurrency)
        let flows = "\(targets.count) flow\(targets.count == 1 ? "" : "s")"
        let times = count == 1 ? "" : " × \(count) = \(job.queue.count) requests"
        let pace = concurrency < job.queue.count ? ", at most \(concurrency) at once" : ""
        let effect = launch(&job, in: state)
        if job.isDone {
            state.notice = Notice(text: "Replayed \(flows): \(job.summary)", isError: job.sent == 0)
            return effect
        }
        state.notice = Notice(text: "Replaying \(flows)\(times)\(pace)", isError: false)
        state.replayJobs.append(job)
        return effect
    }

    /// Sends from the queue while fewer than `concurrency` are in flight.
    private static func launch(_ job: inout ReplayJob, in state: AppState) -> Effect {
        var effects: [Effect] = []
        while job.inFlight < job.concurrency, !job.queue.isEmpty {
            let sequence = job.queue.removeFirst()
            guard let record = state.session.store[sequence], !record.isDeleted else { continue }
            let route = replayRoute(record, in: state)
            let connection: ConnectionID
            switch route {
            case .app(let agent): connection = agent.connection
            case .own: connection = OwnRequest.connection
            case .needsEditor:
                job.skipped += 1
                continue
            }
            job.awaiting[ReplayJob.Send(origin: record.log.id, connection: connection), default: 0] += 1
            job.sent += 1
            effects.append(replayEffect(record, by: route))
        }
        return combined(effects)
    }

    /// Counts the results of the replay jobs among `events`, sends more,
    /// and says so when a job is done.
    static func followReplayJob(_ events: [InboxEvent], in state: inout AppState) -> Effect {
        guard !state.replayJobs.isEmpty else { return .none }
        for event in events {
            switch event {
            case let .message(connection, .flowStarted(log)):
                guard let origin = log.changes?.replayOf,
                      let index = state.replayJobs.firstIndex(where: { $0.awaiting[.init(origin: origin, connection: connection), default: 0] > 0 })
                else { continue }
                let send = ReplayJob.Send(origin: origin, connection: connection)
                state.replayJobs[index].awaiting[send, default: 0] -= 1
                if state.replayJobs[index].awaiting[send] == 0 { state.replayJobs[index].awaiting[send] = nil }
                // A quick flow's end may come folded into its start.
                if log.state.isFinal {
                    count(log.state, in: &state.replayJobs[index])
                } else {
                    state.replayJobs[index].running[log.id] = connection
                }
            case .message(_, .flowFinished(let end)):
                guard let index = state.replayJobs.firstIndex(where: { $0.running[end.id] != nil }) else { continue }
                state.replayJobs[index].running[end.id] = nil
                count(end.state, in: &state.replayJobs[index])
            case .disconnected(let connection, _):
                // What a departed app was sending will never be reported.
                for index in state.replayJobs.indices {
                    let lost = state.replayJobs[index].awaiting.filter { $0.key.connection == connection }
                    let gone = state.replayJobs[index].running.filter { $0.value == connection }
                    state.replayJobs[index].failed += lost.values.reduce(0, +) + gone.count
                    for send in lost.keys { state.replayJobs[index].awaiting[send] = nil }
                    for id in gone.keys { state.replayJobs[index].running[id] = nil }
                }
            default:
                continue
            }
        }
        var effects: [Effect] = []
        for index in state.replayJobs.indices {
            var job = state.replayJobs[index]
            effects.append(launch(&job, in: state))
            state.replayJobs[index] = job
        }
        for job in state.replayJobs where job.isDone {
            let text = "Replay done: \(job.summary)"
            state.notice = Notice(text: text, isError: job.failed > 0)
            state.session.note(text, level: job.failed > 0 ? .error : .info, at: state.clock)
        }
        state.replayJobs.removeAll(where: \.isDone)
        return combined(effects)
    }

    private static func count(_ end: FlowState, in job: inout ReplayJob) {
        if end == .completed { job.finished += 1 } else { job.failed += 1 }
    }

    /// One effect for several; none left out but ``Effect/none``.
    static func combined(_ effects: [Effect]) -> Effect {
        let effects = effects.filter { $0 != .none }
        return effects.count <= 1 ? effects.first ?? .none : .batch(effects)
    }
}
