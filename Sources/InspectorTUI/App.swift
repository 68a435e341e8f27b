import FlowFilter
import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// The main loop: wait for a key, a listener event or a signal; reduce;
/// render; blit. Runs on the main thread, the only one that touches ncurses.
struct App {
    var state: AppState
    let inbox: Inbox
    let terminal: Terminal
    /// `--save`: finished flows appended as JSON lines.
    let saver: FlowLineWriter?
    private var assembler = FlowAssembler()
    /// Made at the first request netinspect sends itself.
    private var replayClient: ReplayClient?
    /// The command netinspect runs (`netinspect -- COMMAND`), its output read into the output view.
    var command: WrappedCommand?
    /// How `:replay.server` matches (the `--server-replay-*` flags).
    var serverReplayOptions = ServerReplayOptions()

    init(state: AppState, inbox: Inbox, terminal: Terminal, saver: FlowLineWriter? = nil) {
        self.state = state
        self.inbox = inbox
        self.terminal = terminal
        self.saver = saver
    }

    /// Every flow in the store, oldest first (for `--har` on exit).
    var allFlows: [NetworkLog] { state.session.store.allRecords.filter { !$0.isDeleted }.map(\.log) }
    /// `--baseline`'s recorded run, for the verdict at the end.
    var baseline: BaselineView? { state.baseline }
    /// The marks and comments of the stored flows (for `--har` on exit).
    var annotations: [FlowID: FlowAnnotation] { state.session.store.annotations }

    /// Applies an action before the loop starts (`--filter`).
    mutating func apply(_ action: Action) { _ = Reducer.reduce(&state, action) }

    /// Shows the flows of a file (`--read`) as if one agent had sent them,
    /// with the marks and comments the file holds.
    mutating func open(_ contents: FlowFile.Contents, from path: String) {
        open(contents.flows, from: path)
        if !contents.annotations.isEmpty { apply(.annotate(contents.annotations)) }
    }

    private mutating func open(_ flows: [NetworkLog], from path: String) {
        let source = ConnectionID.file
        let hello = Hello(agentName: Session.fileAgentName, agentVersion: "", appName: (path as NSString).lastPathComponent,
                          processID: 0, hostName: ProcessInfo.processInfo.hostName)
        let events = [InboxEvent.connected(source, hello, peer: path)] + flows.map { .message(source, .flowStarted($0)) }
        apply(.inbox(events, at: Date()))
    }

    /// Runs until the user quits or a signal arrives.
    mutating func run() {
        _ = Reducer.reduce(&state, .resize(terminal.size))
        _ = Reducer.reduce(&state, .tick(Date()))
        if let failure = saver?.failure { apply(.notify(failure, isError: true)) }
        terminal.blit(Renderer.render(state, size: state.size))
        var descriptors = [
            pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            pollfd(fd: inbox.wakeFileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: command?.outputDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
            pollfd(fd: command?.exitDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        if let command { apply(.commandStarted(command.commandLine)) }
        while true {
            // The timeout only matters if a wake-up were lost; resizes arrive
            // as KEY_RESIZE after SIGWINCH interrupts poll().
            _ = poll(&descriptors, nfds_t(descriptors.count), 250)
            if descriptors[2].revents != 0 {
                // A signal ends the UI; the command gets it too.
                for received in SignalPipe.take() { command?.forward(received) }
                return
            }
            if descriptors[3].revents != 0 || descriptors[4].revents != 0 { readCommand(&descriptors) }
            // The state is reduced in place, never through a copy: a copy
            // would make the next mutation duplicate every stored flow.
            for input in terminal.readInput() {
                switch input {
                case .resize:
                    terminal.invalidate()
                    _ = Reducer.reduce(&state, .resize(terminal.size))
                case .key(let key):
                    if !perform(Reducer.reduce(&state, .key(key))) { return }
                case let .click(row, column):
                    if !perform(Reducer.reduce(&state, .click(row: row, column: column))) { return }
                case .wheel(let lines):
                    _ = Reducer.reduce(&state, .wheel(lines))
                }
            }
            let events = inbox.drain()
            if !events.isEmpty {
                _ = perform(Reducer.reduce(&state, .inbox(events, at: Date())))
                save(events)
                // In the store, so on screen: the agents may count them as delivered.
                inbox.acknowledge(Inbox.takenEvents(in: events))
            }
            _ = Reducer.reduce(&state, .tick(Date()))
            terminal.blit(Renderer.render(state, size: state.size))
        }
    }

    /// Lets netinspect's own requests finish and releases its client; a
    /// command still running gets SIGTERM, as when its terminal closes.
    func shutdown() {
        replayClient?.shutdown()
        command?.terminate()
    }

    /// Shows what the command wrote, and its end once its output is all read.
    private mutating func readCommand(_ descriptors: inout [pollfd]) {
        guard let command else { return }
        if descriptors[3].fd >= 0 {
            if let bytes = command.readOutput() {
                if !bytes.isEmpty { apply(.commandOutput(bytes)) }
            } else {
                descriptors[3].fd = -1
            }
        }
        // Its end after the last of its output (a child it left may hold
        // the pipe: then the end shows without waiting for that).
        if descriptors[4].revents != 0, let outcome = command.outcome {
            if descriptors[3].fd >= 0, let bytes = command.readOutput(), !bytes.isEmpty { apply(.commandOutput(bytes)) }
            descriptors[4].fd = -1
            apply(.commandEnded(outcome.summary, succeeded: outcome.shellStatus == 0))
        }
    }

    /// The flows still in the store that match any of `filters` (`--fail-on` at the end of the UI).
    func flows(matchingAny filters: [FilterExpression]) -> [NetworkLog] {
        let store = state.session.store
        return store.allRecords.filter { record in
            !record.isDeleted && filters.contains { $0.matches(record.log, origin: store.origin(of: record)) }
        }.map(\.log)
    }

    /// Carries out what the reducer asked for; false to quit.
    private mutating func perform(_ effect: Effect) -> Bool {
        switch effect {
        case .none: break
        case .quit: return false
        case .copyToClipboard(let text): terminal.sendControlSequence(osc52Clipboard(text))
        case .control(let message, let connection): inbox.send(message, to: connection)
        case .send(let request):
            if replayClient == nil { replayClient = ReplayClient(inbox: inbox) }
            replayClient?.send(request)
        case .batch(let effects):
            for effect in effects where !perform(effect) { return false }
        case .edit(let session):
            let (text, failure) = terminal.runOutside { Editor.edit(session.text) }
            return perform(Reducer.reduce(&state, .edited(session, text: text, failure: failure)))
        case .loadRule(let request):
            let result = Result { () throws(RuleLoader.RuleError) in
                try RuleLoader.load(request.kind, spec: request.spec, relativeTo: request.directory)
            }
            return perform(Reducer.reduce(&state, .ruleLoaded(request, result)))
        case .startServerReplay(let paths):
            do {
                let replay = try ServerReplaySet(paths: paths, options: serverReplayOptions)
                inbox.replaceServerReplay(replay.frames())
                apply(.serverReplayChanged(ServerReplayProgress(summary: replay.summary, responses: replay.entries.count)))
            } catch {
                apply(.notify("replay.server: \(error)", isError: true))
            }
        case .stopServerReplay:
            inbox.replaceServerReplay([])
            apply(.serverReplayChanged(nil))
        case .rulesChanged(let book):
            inbox.replaceRules(book.inForce)
            if let path = book.path {
                do {
                    try RuleLoader.save(book, to: path)
                    apply(.rulesSaved(.saved(path: path)))
                } catch {
                    apply(.rulesSaved(.failed(path: path, reason: error.description)))
                }
            }
        case let .exportHAR(flows, annotations, path):
            do {
                try HARFile.write(flows, annotations: annotations, to: path)
                apply(.notify("Wrote \(flows.count) flows to \(path)", isError: false))
            } catch {
                apply(.notify("Could not write \(path): \(error.localizedDescription)", isError: true))
            }
        case let .writeFile(data, path, note):
            do {
                try data.write(to: URL(fileURLWithPath: path))
                apply(.notify(note, isError: false))
            } catch {
                apply(.notify("Could not write \(path): \(error.localizedDescription)", isError: true))
            }
        case let .saveFlows(contents, path):
            do {
                try FlowLineWriter.writeSession(contents, to: path)
                apply(.notify("Saved \(contents.flows.count) flows to \(path)", isError: false))
            } catch {
                apply(.notify("Could not write \(path): \(error.localizedDescription)", isError: true))
            }
        case .annotationsChanged(let annotations):
            for (id, annotation) in annotations {
                if let failure = saver?.write(annotation, for: id) { apply(.notify(failure, isError: true)) }
            }
        }
        return true
    }

    private mutating func save(_ events: [InboxEvent]) {
        guard let saver else { return }
        for event in events {
            for finished in assembler.apply(event) {
                if let failure = saver.write(finished.log) { apply(.notify(failure, isError: true)) }
            }
        }
    }
}
