import ArgumentParser
import FlowFilter
import Foundation
import InspectorCore
import WireProtocol

/// `netinspect [OPTIONS] -- COMMAND [ARGS…]`: the command runs with its
/// agent pointed at this netinspect, and `--fail-on` turns what was
/// captured into an exit status.
extension Netinspect {
    /// The status netinspect ends with when a `--fail-on` filter matched
    /// and nothing else failed: apart from 1 (what most commands fail with)
    /// and 2 (usage errors of many tools), so a CI log tells them apart.
    static let failOnStatus: Int32 = 3

    /// The socket a wrapped command's agent connects to when no `--listen`
    /// was given: in a directory of its own that only this user may enter,
    /// made in ``makePrivateDirectory()``, so that neither another
    /// netinspect nor another user's program can reach it.
    static let privateEndpoint: Endpoint = {
        let directory = (NSTemporaryDirectory() as NSString)
            .appendingPathComponent("netinspect-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        return .unix(path: directory + "/agent.sock")
    }()

    /// Whether the command gets its own socket rather than one `--listen` named.
    var usesPrivateSocket: Bool { !command.isEmpty && !listen.contains { !$0.hasPrefix("otlp:") } }

    /// Whether traffic rules were given (they change live traffic, so a `--read` file has no use for them).
    var hasTrafficRules: Bool {
        rulesFile != nil || !mapRemote.isEmpty || !mapLocal.isEmpty || !modifyHeaders.isEmpty || !conditions.isEmpty
    }

    /// The options given that only an app allowing control obeys (rules,
    /// conditions, server replay): the wrapped command is told it may be
    /// controlled, and an app that connects without allowing it is told of
    /// in a line (``Headless``, the event log).
    var optionsNeedingControl: [String] {
        [("--rules", rulesFile != nil), ("--map-remote", !mapRemote.isEmpty), ("--map-local", !mapLocal.isEmpty),
         ("--modify-headers", !modifyHeaders.isEmpty), ("--condition", !conditions.isEmpty), ("--server-replay", !serverReplay.files.isEmpty)]
            .filter(\.1).map(\.0)
    }

    /// Whether control was asked for: then the command's agent is told it may be controlled.
    var asksForControl: Bool { !optionsNeedingControl.isEmpty }

    func validateWrapping() throws {
        for expression in failOn {
            do {
                _ = try FilterExpression.parse(expression)
            } catch {
                throw ValidationError("--fail-on: \(error.description)")
            }
        }
        guard !summary || dump || json else { throw ValidationError("--summary prints at the end of --dump or --json; in the UI, s shows the insights") }
        guard !command.isEmpty else { return }
        guard read == nil else { throw ValidationError("-- COMMAND runs a program to watch; it cannot be combined with --read") }
        guard !demo else { throw ValidationError("-- COMMAND and --demo each bring an app; pick one") }
    }

    /// Creates the directory of ``privateEndpoint`` (mkdir(2) fails if
    /// anything, a link included, is there already).
    func makePrivateDirectory() throws {
        guard usesPrivateSocket, case .unix(let path) = Self.privateEndpoint else { return }
        let directory = (path as NSString).deletingLastPathComponent
        guard mkdir(directory, 0o700) == 0 else {
            throw ValidationError("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the directory of ``privateEndpoint`` once the listener has
    /// removed its socket file.
    func removePrivateDirectory() {
        guard usesPrivateSocket, case .unix(let path) = Self.privateEndpoint else { return }
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    /// Starts the command with `NETINSPECT` set to the first address the
    /// listener bound (a `tcp:` port 0 resolved), and `NETINSPECT_CONTROL=1`
    /// when control was asked for; nil when there is no command.
    func startCommand(listeningOn bound: [Endpoint], capturesOutput: Bool) throws -> WrappedCommand? {
        guard !command.isEmpty else { return nil }
        guard let endpoint = bound.first else { throw ValidationError("-- COMMAND needs an agent address to listen on, not only otlp:") }
        var environment = [Endpoint.environmentVariable: endpoint.description]
        if asksForControl { environment[Endpoint.controlEnvironmentVariable] = "1" }
        do {
            return try WrappedCommand.start(command, adding: environment, capturesOutput: capturesOutput)
        } catch let error as WrappedCommand.SpawnError {
            Headless.warn("netinspect: \(error)")
            throw ExitCode(ForegroundCommand.Outcome.cannotStart(error.description).shellStatus)
        }
    }

    /// The status netinspect ends with: a command's failure wins (its
    /// status, 128 + N for a death by signal N), then a `--fail-on` match
    /// (``failOnStatus``), else 0.
    static func exitStatus(command outcome: ForegroundCommand.Outcome?, failOnMatched: Bool) -> Int32 {
        if let outcome, outcome.shellStatus != 0 { return outcome.shellStatus }
        return failOnMatched ? failOnStatus : 0
    }
}

extension Netinspect {
    /// After the UI: `--fail-on`'s verdict on the flows still in the list,
    /// and the exit status, as headless would give it.
    func finishUI(_ app: App) throws {
        var headless = Headless(output: .dump, filter: nil, timeZone: .current, saver: nil, keepLimit: nil)
        headless.failing = app.flows(matchingAny: try failOn.map { try FilterExpression.parse($0) })
        headless.report(failOnExpressions: failOn)
        let changed = try app.baseline.map { try baseline.report($0, against: app.allFlows) } ?? false
        let status = Self.exitStatus(command: app.command?.outcome, failOnMatched: !headless.failing.isEmpty || changed)
        if status != 0 { throw ExitCode(status) }
    }
}
