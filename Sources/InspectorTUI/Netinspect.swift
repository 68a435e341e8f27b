import ArgumentParser
import FlowFilter
import Foundation
import InspectorCore
import InspectorIngest
import OTLPReceiver
import ProtobufWire
import WireProtocol

/// `netinspect`: the live terminal inspector for flows captured by CaptureAgent.
@main
struct Netinspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netinspect",
        abstract: "Watch the HTTP traffic of Swift apps that embed CaptureAgent, live, in the terminal.",
        discussion: """
            Agents connect to the address given with --listen (by default the same Unix socket \
            they use by default: \(Endpoint.defaultEndpoint())). Press ? inside for the keys.
            """,
        version: versionText
    )

    @Option(
        name: .customLong("listen"),
        help: ArgumentHelp(
            "Where agents connect: unix:PATH or tcp:HOST:PORT; otlp:HOST:PORT receives OpenTelemetry traces (OTLP/HTTP, see docs/FLEET.md). Repeat to listen on several. (default: \(Endpoint.defaultEndpoint()))",
            valueName: "address"
        ),
        completion: .list(["unix:", "tcp:127.0.0.1:", "otlp:127.0.0.1:4318"])
    )
    var listen: [String] = []

    @Option(help: ArgumentHelp("Shared secret agents must send; required when listening on a non-loopback TCP address.", valueName: "secret"))
    var token: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain: otlp: addresses serve HTTPS with it (needs --tls-key).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(name: .customLong("max-flows"), help: "Flows kept in memory; the oldest are dropped beyond this.")
    var maxFlows: Int = 100_000

    @Option(name: .customLong("body-budget"), help: "Megabytes of captured bodies kept; older flows lose their bodies beyond this.")
    var bodyBudget: Int = 256

    @Flag(name: .customLong("no-mouse"), help: "Do not ask the terminal for mouse clicks and the wheel (leaves the terminal's own text selection alone).")
    var noMouse = false

    @Option(help: ArgumentHelp("Key bindings: one 'KEY COMMAND [CONTEXT,…]' a line, replacing the default key there ('KEY none CONTEXT' unbinds). Default: ~/.config/netinspect/keys when it exists.", valueName: "file"))
    var keys: String?

    @Flag(help: "Run a built-in demo app that makes live traffic, to try netinspect out.")
    var demo = false

    @Flag(help: "No terminal UI: print one line per finished flow (time, method, status, URL, size, duration). For scripts, CI logs and SSH sessions without a terminal.")
    var dump = false

    @Flag(help: "No terminal UI: print each finished flow as one line of JSON (a NetworkLog, as in docs/PROTOCOL.md).")
    var json = false

    @Flag(help: "With --dump or --json: also print each server-sent event and WebSocket message as it arrives, a line each, tagged with its flow.")
    var messages = false

    @Option(help: ArgumentHelp("Show only flows matching a filter expression, e.g. '~c 5xx' or '~m POST & ~d example.com' (the language of the f key).", valueName: "expression"))
    var filter: String?

    @Option(help: ArgumentHelp("On exit, write every flow of the session to this HAR 1.2 file.", valueName: "file"), completion: .file())
    var har: String?

    @Option(help: ArgumentHelp("Open the flows of a HAR file (ours or another tool's) or of a --save file, instead of listening.", valueName: "file"), completion: .file())
    var read: String?

    @Option(help: ArgumentHelp("Append every finished flow to this file as JSON lines while running, so nothing is lost if the terminal dies. --read opens it. If it cannot be written, the UI shows why and runs on without saving; --dump and --json exit with the error.", valueName: "file"), completion: .file())
    var save: String?

    @Option(name: .customLong("map-remote"), help: ArgumentHelp(
        "Send matching requests elsewhere, mitmproxy's syntax: '[|FILTER]|URL-REGEX|REPLACEMENT', e.g. '|api.example.com|127.0.0.1:8080'. Repeatable. Applied only by agents whose app allows control (NETINSPECT_CONTROL=1), while this netinspect is connected.",
        valueName: "rule"))
    var mapRemote: [String] = []

    @Option(name: .customLong("map-local"), help: ArgumentHelp(
        "Answer matching requests from a file, or a directory (the rest of the URL path picks the file), with no network: '[|FILTER]|URL-REGEX|PATH'. Repeatable.",
        valueName: "rule"))
    var mapLocal: [String] = []

    @Option(name: .customLong("modify-headers"), help: ArgumentHelp(
        "Set a request header; an empty value removes it: '[/FILTER]/NAME/VALUE'. Repeatable.",
        valueName: "rule"))
    var modifyHeaders: [String] = []

    @Option(name: .customLong("condition"), help: ArgumentHelp(
        "Slow down or break matching flows: '|FILTER|SPEC', an empty FILTER ('||3g') for every flow. SPEC is a preset (gprs, 2g, good-2g, 3g, good-3g, 4g, dsl, wifi, offline) or key=value pairs: latency=300ms, down=750kbit, up=250kbit, fail=5%:reset (or timeout, offline, a status), seed=N. Repeatable.",
        valueName: "rule"))
    var conditions: [String] = []

    @Option(name: .customLong("rules"), help: ArgumentHelp(
        "Read traffic rules from a file, one a line: 'map-remote |a|b', 'map-local |a|./file', 'modify-headers /N/V', 'condition |~d api|latency=300ms'; # comments; '# off: KIND SPEC' is a rule that is off. The UI's rules view (R) saves its changes back to this file.",
        valueName: "file"))
    var rulesFile: String?

    @OptionGroup
    var serverReplay: ServerReplayFlags

    @OptionGroup
    var baseline: BaselineFlags

    @Option(name: .customLong("proto"), help: ArgumentHelp(
        "A protobuf descriptor set (protoc --include_imports --descriptor_set_out=FILE.pb …), repeatable: gRPC messages of the methods it describes are shown with field and enum value names.",
        valueName: "file"))
    var protoFiles: [String] = []

    @Option(name: .customLong("fail-on"), help: ArgumentHelp(
        "End with a non-zero status (3, or the command's own when it failed) when any flow matches this filter, after listing those flows, e.g. '~c 5xx | ~e'. Repeatable: any of them.",
        valueName: "expression"))
    var failOn: [String] = []

    @Flag(help: "At the end (--dump, --json, --read), print the insights table: the traffic by host, route and service, with counts, error rates and percentiles.")
    var summary = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp(
        "After --: a command to run with its agent pointed at this netinspect (NETINSPECT in its environment). netinspect ends with it under --dump and --json, with its exit status.",
        valueName: "command"))
    var command: [String] = []

    /// The parsed listen addresses (the default socket when none were given).
    var endpoints: [Endpoint] {
        get throws {
            let agentAddresses = listen.filter { !$0.hasPrefix("otlp:") }
            // Only otlp: addresses given: no agent socket.
            guard !agentAddresses.isEmpty || listen.isEmpty else { return [] }
            guard !agentAddresses.isEmpty else {
                if !command.isEmpty { return [Self.privateEndpoint] }
                return [demo ? Self.demoEndpoint() : Endpoint.defaultEndpoint()]
            }
            return try agentAddresses.map { text in
                do {
                    return try Endpoint(parsing: text)
                } catch let error as Endpoint.ParseError {
                    throw ValidationError("--listen \(error.description)")
                }
            }
        }
    }

    /// The demo's app runs in this process and needs no well-known socket:
    /// a private one, beside the default, leaves the default to a
    /// netinspect already running.
    static func demoEndpoint(processID: Int32 = getpid()) -> Endpoint {
        guard case .unix(let path) = Endpoint.defaultEndpoint() else { return Endpoint.defaultEndpoint() }
        return .unix(path: (path as NSString).deletingLastPathComponent + "/netinspect-demo-\(processID).sock")
    }

    /// The listener configuration the options describe, with the rules
    /// the files and flags give.
    func listenerConfiguration(rules: RuleBook, serverReplay: ServerReplaySet? = nil) throws -> ListenerConfiguration {
        var configuration = ListenerConfiguration(endpoints: try endpoints, token: token)
        configuration.rules = rules.inForce
        configuration.serverReplayFrames = serverReplay?.frames() ?? []
        return configuration
    }

    func validate() throws {
        guard maxFlows > 0 else { throw ValidationError("--max-flows must be at least 1 (got \(maxFlows))") }
        guard !(dump && json) else { throw ValidationError("--dump and --json both choose the output; pick one") }
        guard !messages || dump || json else { throw ValidationError("--messages adds lines to --dump or --json; add one of them") }
        guard read == nil || listen.isEmpty else { throw ValidationError("--read opens a file instead of listening; leave out --listen") }
        guard read == nil || !demo else { throw ValidationError("--demo needs a live inspector; it cannot be combined with --read") }
        guard read == nil || !hasTrafficRules else { throw ValidationError("traffic rules change live traffic; they cannot be combined with --read") }
        guard read == nil || serverReplay.files.isEmpty else {
            throw ValidationError("--server-replay answers live traffic; it cannot be combined with --read")
        }
        if let filter {
            do {
                _ = try FilterExpression.parse(filter)
            } catch {
                throw ValidationError("--filter: \(error.description)")
            }
        }
        try validateWrapping()
        guard bodyBudget >= 0 else { throw ValidationError("--body-budget must be 0 or more megabytes (got \(bodyBudget))") }
        do {
            let configuration = ListenerConfiguration(endpoints: try endpoints, token: token)
            if !configuration.endpoints.isEmpty { try configuration.validate() }
            try otlpConfiguration?.validate()
        } catch let error as ListenerError {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        // The files the options name (--proto, --rules and map-local's,
        // --keys) are read here, once; validate() reads none.
        let files = try OptionFiles(self)
        let flowsFromFile = try read.map { path in
            do { return try FlowFile.readContents(path: path) } catch { throw ValidationError("\(error)") }
        }
        if dump || json {
            // Headless output feeds scripts: a file that cannot be written is an error up front.
            let saver = try save.map { path in
                do { return try FlowLineWriter(path: path) } catch { throw ValidationError("\(error)") }
            }
            let status = try runHeadless(flowsFromFile: flowsFromFile?.flows, saver: saver, files: files)
            if status != 0 { throw ExitCode(status) }
            return
        }
        // In the UI an unwritable --save is shown and logged, and the
        // session goes on without saving, as when the disk fills up later.
        let saver = save.map(FlowLineWriter.opening(path:))

        let inbox = Inbox()
        let rules = files.ruleBook
        let configuration = try listenerConfiguration(rules: rules, serverReplay: files.serverReplay)
        let listener = InspectorListener(configuration: configuration, inbox: inbox)
        try makePrivateDirectory()
        defer { removePrivateDirectory() }
        // A ListenerError (say, another netinspect on the socket) is printed
        // as it is, without the usage text a ValidationError would add.
        let bound = flowsFromFile == nil && !configuration.endpoints.isEmpty ? try listener.start() : []
        defer { listener.shutdown() }
        let otlpReceiver = flowsFromFile == nil ? try startOTLPReceiver(inbox: inbox) : nil
        defer { otlpReceiver?.shutdown() }
        let demoApp = demo ? try DemoWorkload.start(inspector: bound, token: token) : nil
        defer { demoApp?.stop() }
        SignalPipe.install()
        CrashGuard.arm()
        let terminal = try Terminal(mouse: !noMouse)
        defer { terminal.restore() }
        var app = App(
            state: AppState(limits: FlowStore.Limits(maximumFlows: maxFlows, bodyMemoryBudget: bodyBudget * 1024 * 1024),
                            keymap: files.keymap, rules: rules, protoSchema: files.protoSchema),
            inbox: inbox,
            terminal: terminal,
            saver: saver
        )
        app.state.baseline = try baseline.load()
        if let flowsFromFile, let read { app.open(flowsFromFile, from: read) }
        app.serverReplayOptions = serverReplay.options
        if let replay = files.serverReplay {
            app.apply(.serverReplayChanged(ServerReplayProgress(summary: replay.summary, responses: replay.entries.count)))
        }
        if let filter { app.apply(Action.applyFilter(filter)) }
        app.command = try startCommand(listeningOn: bound, capturesOutput: true)
        app.run()
        app.shutdown()
        terminal.restore()
        if let har { try writeHAR(app.allFlows, annotations: app.annotations, to: har) }
        try finishUI(app)
    }

    /// Runs without a UI; the status to exit with (``exitStatus(command:failOnMatched:)``).
    private func runHeadless(flowsFromFile: [NetworkLog]?, saver: FlowLineWriter?, files: OptionFiles) throws -> Int32 {
        var headless = Headless(
            output: json ? .json : .dump,
            filter: try filter.map { try FilterExpression.parse($0) },
            timeZone: .current,
            saver: saver,
            keepLimit: har == nil ? nil : maxFlows
        )
        if messages { headless.messageTap = MessageTap() }
        headless.failOn = try failOn.map { try FilterExpression.parse($0) }
        if summary { headless.insights = Insights() }
        headless.filterText = filter
        headless.optionsNeedingControl = optionsNeedingControl
        let baselineView = try baseline.load()
        if baselineView != nil { headless.compared = [] }
        var commandOutcome: ForegroundCommand.Outcome?
        if let flowsFromFile {
            headless.print(flowsFromFile)
        } else {
            let inbox = Inbox()
            let configuration = try listenerConfiguration(rules: files.ruleBook, serverReplay: files.serverReplay)
            if let replay = files.serverReplay { FileHandle.standardError.write(Data(replay.report.utf8)) }
            let listener = InspectorListener(configuration: configuration, inbox: inbox)
            try makePrivateDirectory()
            defer { removePrivateDirectory() }
            let bound = configuration.endpoints.isEmpty ? [] : try listener.start()
            defer { listener.shutdown() }
            let otlpReceiver = try startOTLPReceiver(inbox: inbox)
            defer { otlpReceiver?.shutdown() }
            let demoApp = demo ? try DemoWorkload.start(inspector: bound, token: token) : nil
            defer { demoApp?.stop() }
            SignalPipe.install()
            if let command = try startCommand(listeningOn: bound, capturesOutput: false) {
                headless.run(inbox: inbox, command: command)
                commandOutcome = command.outcome
            } else {
                headless.run(inbox: inbox)
            }
        }
        headless.insights?.settle()
        headless.report(failOnExpressions: failOn)
        let changed = try baselineView.map { try baseline.report($0, against: headless.compared ?? []) } ?? false
        if let har { try writeHAR(headless.kept, to: har) }
        return Self.exitStatus(command: commandOutcome, failOnMatched: !headless.failing.isEmpty || changed)
    }

    private func writeHAR(_ flows: [NetworkLog], annotations: [FlowID: FlowAnnotation] = [:], to path: String) throws {
        do {
            try HARFile.write(flows, annotations: annotations, to: path)
            Headless.warn("netinspect: wrote \(flows.count) flows to \(path)")
        } catch {
            throw ValidationError("--har \(path): \(error)")
        }
    }
}
