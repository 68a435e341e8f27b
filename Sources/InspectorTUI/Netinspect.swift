import ArgumentParser
import Foundation
import InspectorCore
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
            """
    )

    @Option(
        name: .customLong("listen"),
        help: ArgumentHelp(
            "Where agents connect: unix:PATH or tcp:HOST:PORT. Repeat to listen on several. (default: \(Endpoint.defaultEndpoint()))",
            valueName: "address"
        )
    )
    var listen: [String] = []

    @Option(help: ArgumentHelp("Shared secret agents must send; required when listening on a non-loopback TCP address.", valueName: "secret"))
    var token: String?

    @Option(name: .customLong("max-flows"), help: "Flows kept in memory; the oldest are dropped beyond this.")
    var maxFlows: Int = 100_000

    @Option(name: .customLong("body-budget"), help: "Megabytes of captured bodies kept; older flows lose their bodies beyond this.")
    var bodyBudget: Int = 256

    @Flag(help: "Run a built-in demo app that makes live traffic, to try netinspect out.")
    var demo = false

    /// The parsed listen addresses (the default socket when none were given).
    var endpoints: [Endpoint] {
        get throws {
            guard !listen.isEmpty else { return [Endpoint.defaultEndpoint()] }
            return try listen.map { text in
                do {
                    return try Endpoint(parsing: text)
                } catch let error as Endpoint.ParseError {
                    throw ValidationError("--listen \(error.description)")
                }
            }
        }
    }

    /// The listener configuration the options describe.
    var listenerConfiguration: ListenerConfiguration {
        get throws { ListenerConfiguration(endpoints: try endpoints, token: token) }
    }

    func validate() throws {
        guard maxFlows > 0 else { throw ValidationError("--max-flows must be at least 1 (got \(maxFlows))") }
        guard bodyBudget >= 0 else { throw ValidationError("--body-budget must be 0 or more megabytes (got \(bodyBudget))") }
        do {
            try listenerConfiguration.validate()
        } catch let error as ListenerError {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let inbox = Inbox()
        let listener = InspectorListener(configuration: try listenerConfiguration, inbox: inbox)
        // A ListenerError (say, another netinspect on the socket) is printed
        // as it is, without the usage text a ValidationError would add.
        let bound = try listener.start()
        defer { listener.shutdown() }
        let demoApp = demo ? try DemoWorkload.start(inspector: bound, token: token) : nil
        defer { demoApp?.stop() }
        SignalPipe.install()
        CrashGuard.arm()
        let terminal = try Terminal()
        defer { terminal.restore() }
        var app = App(
            state: AppState(limits: FlowStore.Limits(maximumFlows: maxFlows, bodyMemoryBudget: bodyBudget * 1024 * 1024)),
            inbox: inbox,
            terminal: terminal
        )
        app.run()
    }
}
