import FlowFilter
import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// `--dump` and `--json`: no terminal UI; one line per finished flow on
/// standard output, connection news on standard error. Ends cleanly on
/// SIGINT, SIGTERM or SIGHUP, or at the end of a `--read` file.
struct Headless {
    enum Output { case dump, json }

    let output: Output
    let filter: FilterExpression?
    /// `--filter` as typed, for `--summary` to say which flows it summarises.
    var filterText: String?
    let timeZone: TimeZone
    let saver: FlowLineWriter?
    /// Finished flows kept for `--har` (bounded by `--max-flows`).
    var kept: [NetworkLog] = []
    let keepLimit: Int?
    /// `--fail-on`'s filters, and the flows that matched one (``observe(_:origin:)``).
    var failOn: [FilterExpression] = []
    var failing: [NetworkLog] = []
    /// `--summary`: the traffic's insights, printed at the end.
    var insights: Insights?
    /// With `--baseline`: every finished flow, compared with the baseline's at the end.
    var compared: [NetworkLog]?
    /// The options given that only an app allowing control obeys, named
    /// when an app that does not allow it connects.
    var optionsNeedingControl: [String] = []
    /// Who is connected, to name them when they leave.
    private(set) var agents: [ConnectionID: Hello] = [:]
    /// Which captured call made each captured service's inbound flow.
    private var links = DumpLinks()
    /// Lines not written yet (``flushOutput()``).
    var pendingOutput: [UInt8] = []
    /// With `--messages`, reads each event and message as it arrives (Headless+Messages.swift).
    var messageTap: MessageTap?
    /// A file's flows go out in writes of about this many bytes.
    private static let outputChunk = 1 << 20

    init(output: Output, filter: FilterExpression?, timeZone: TimeZone, saver: FlowLineWriter?, keepLimit: Int?) {
        self.output = output
        self.filter = filter
        self.timeZone = timeZone
        self.saver = saver
        self.keepLimit = keepLimit
    }

    /// Prints the flows of a file and returns.
    mutating func print(_ flows: [NetworkLog]) {
        for flow in flows {
            printMessages(of: .message(.file, .flowStarted(flow)), assembler: FlowAssembler())
            emit(FlowAssembler.Finished(log: flow, agent: nil))
            if pendingOutput.count >= Self.outputChunk { flushOutput() }
        }
        flushOutput()
    }

    /// Prints finished flows from the inbox until a signal arrives.
    mutating func run(inbox: Inbox) {
        var assembler = FlowAssembler()
        var descriptors = [
            pollfd(fd: inbox.wakeFileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            _ = poll(&descriptors, nfds_t(descriptors.count), 1000)
            absorb(inbox, with: &assembler)
            if descriptors[1].revents != 0 { return }
        }
    }

    /// Prints the flows the inbox's events finish and acknowledges them;
    /// the number of events taken.
    @discardableResult
    mutating func absorb(_ inbox: Inbox, with assembler: inout FlowAssembler) -> Int {
        let events = inbox.drain()
        for event in events {
            note(event)
            links.note(event)
            printMessages(of: event, assembler: assembler)
            for finished in assembler.apply(event) { emit(finished) }
        }
        // Printed (the drain's lines in one write(2)): the agents may count them as delivered.
        flushOutput()
        inbox.acknowledge(assembler.takeSettledEvents())
        return events.count
    }

    private mutating func emit(_ finished: FlowAssembler.Finished) {
        let flow = finished.log
        if let saveError = saver?.write(flow) { Self.warn(saveError) }
        if let keepLimit {
            kept.append(flow)
            if kept.count > keepLimit { kept.removeFirst(kept.count - keepLimit) }
        }
        compared?.append(flow)
        let link = links.mark(finished)
        let origin = finished.agent.map { FlowOrigin(app: $0.appName, processID: $0.processID, host: $0.hostName) }
        observe(finished, origin: origin)
        guard filter?.matches(flow, origin: origin) ?? true else { return }
        switch output {
        case .dump:
            // One app needs no naming; more do, each instance apart.
            let app = agents.count > 1 ? finished.agent?.label(among: agents.values) : nil
            DumpFormat.append(flow, in: timeZone, app: app, link: link, to: &pendingOutput)
        case .json: pendingOutput.append(contentsOf: flow.jsonLine(app: finished.agent))
        }
        pendingOutput.append(UInt8(ascii: "\n"))
    }

    /// Writes the lines emitted since the last flush in one write(2): a
    /// write per flow cost as much in the kernel as the flow's decoding.
    private mutating func flushOutput() {
        guard !pendingOutput.isEmpty else { return }
        FileHandle.standardOutput.write(Data(pendingOutput))
        pendingOutput.removeAll(keepingCapacity: pendingOutput.count <= Self.outputChunk)
    }

    private mutating func note(_ event: InboxEvent) {
        switch event {
        case .listening(let endpoint): Self.warn("netinspect: listening on \(endpoint)")
        case let .connected(connection, hello, peer):
            agents[connection] = hello
            Self.warn("netinspect: \(hello.appName) (pid \(hello.processID) on \(hello.hostName)) connected from \(peer)"
                + (hello.acceptsControl ? ", accepts control" : ""))
            if case .agent = connection, !hello.acceptsControl, !optionsNeedingControl.isEmpty {
                Self.warn("netinspect: " + ControlNotice.text(for: hello, ignoring: optionsNeedingControl))
            }
        case let .disconnected(connection, reason):
            let name = agents.removeValue(forKey: connection).map { "\($0.appName) (pid \($0.processID))" } ?? "an agent"
            Self.warn("netinspect: \(name) disconnected" + (reason.map { ": \($0)" } ?? ""))
        case let .rejected(peer, reason): Self.warn("netinspect: closed \(peer): \(reason)")
        case .message(_, .status(let status)) where status.droppedEvents > 0:
            Self.warn("netinspect: the agent has dropped \(status.droppedEvents) events so far")
        case .message: break
        }
    }

    static func warn(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
