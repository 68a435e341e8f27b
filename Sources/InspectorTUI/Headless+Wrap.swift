import FlowFilter
import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// Headless with a command (`netinspect --dump -- COMMAND`), `--fail-on`
/// and `--summary`.
extension Headless {
    /// How long, once the command has ended and no agent is connected,
    /// nothing must arrive before its flows count as in: an agent that
    /// connected just before its process ended may not be accepted yet.
    static let quietPeriodMilliseconds: Int32 = 250
    /// How long netinspect waits, after the command has ended, for agents
    /// still connected (a process the command left running): they must not
    /// keep netinspect, and the CI job, going for ever.
    static let drainLimit: TimeInterval = 5

    /// Prints finished flows until the command has ended and its flows are
    /// in: its agents' connections closed (an agent closes once it has
    /// flushed; the kernel closes a dead one's) and then a quiet period.
    /// Signals netinspect receives go to the command; one after the command
    /// has ended stops the wait.
    mutating func run(inbox: Inbox, command: WrappedCommand) {
        var assembler = FlowAssembler()
        var descriptors = [
            pollfd(fd: inbox.wakeFileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: command.exitDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        var endedAt: Date?
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), endedAt == nil ? 1000 : Self.quietPeriodMilliseconds)
            let taken = absorb(inbox, with: &assembler)
            if descriptors[1].revents != 0 {
                for received in SignalPipe.take() {
                    if endedAt != nil { return }
                    command.forward(received)
                }
            }
            if descriptors[2].revents != 0 {
                // Read once; a closed pipe would stay readable.
                descriptors[2].fd = -1
                endedAt = Date()
                continue
            }
            guard let endedAt else { continue }
            let connected = agents.keys.contains { if case .agent = $0 { true } else { false } }
            if !connected, ready == 0, taken == 0 { return }
            if connected, Date().timeIntervalSince(endedAt) > Self.drainLimit {
                Self.warn("netinspect: the command has ended; not waiting longer for the agents still connected")
                return
            }
        }
    }

    /// Notes a finished flow for `--fail-on`, whatever `--filter` shows, and
    /// for `--summary`, which summarises what it shows (as `s` does the list).
    mutating func observe(_ finished: FlowAssembler.Finished, origin: FlowOrigin?) {
        if failOn.contains(where: { $0.matches(finished.log, origin: origin) }) { failing.append(finished.log) }
        guard filter?.matches(finished.log, origin: origin) ?? true else { return }
        insights?.add(finished.log, service: finished.agent.flatMap(Insights.service(of:)))
    }

    /// Says, on standard error, what `--summary` and `--fail-on` found: the
    /// insights table, then each flow that matched a `--fail-on` filter, in
    /// `--dump`'s format.
    func report(failOnExpressions: [String]) {
        if let insights {
            Self.warn(InsightsTable.text(insights, width: 120, filter: filterText).joined(separator: "\n"))
        }
        guard !failOnExpressions.isEmpty else { return }
        guard !failing.isEmpty else {
            Self.warn("netinspect: no flow matched --fail-on \(failOnExpressions.map { "'\($0)'" }.joined(separator: ", "))")
            return
        }
        var lines: [UInt8] = []
        for flow in failing {
            DumpFormat.append(flow, in: timeZone, to: &lines)
            lines.append(UInt8(ascii: "\n"))
        }
        Self.warn("netinspect: \(failing.count) flow\(failing.count == 1 ? "" : "s") matched --fail-on "
            + failOnExpressions.map { "'\($0)'" }.joined(separator: ", ") + ":\n" + String(decoding: lines.dropLast(), as: UTF8.self))
    }
}
