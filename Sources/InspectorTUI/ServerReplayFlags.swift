import ArgumentParser
import InspectorCore
import WireProtocol

/// `--server-replay` and the options that shape it, under mitmproxy's names.
struct ServerReplayFlags: ParsableArguments {
    @Option(name: .customLong("server-replay"), help: ArgumentHelp(
        "Answer the apps' matching requests from recorded flows (a HAR file, ours or another tool's, or a --save file) before the network, in the app's own client. Repeatable. Applied only by agents whose app allows control.",
        valueName: "file"), completion: .file())
    var files: [String] = []

    @Option(name: .customLong("server-replay-ignore-params"), help: ArgumentHelp(
        "Leave this query parameter out of the match (e.g. a timestamp). Repeatable.", valueName: "name"))
    var ignoreParams: [String] = []

    @Flag(name: .customLong("server-replay-ignore-host"), help: "Match requests whatever their host and port.")
    var ignoreHost = false

    @Flag(name: .customLong("server-replay-ignore-content"), help: "Match requests whatever their body.")
    var ignoreContent = false

    @Option(name: .customLong("server-replay-use-headers"), help: ArgumentHelp(
        "Match on this request header too. Repeatable.", valueName: "name"))
    var useHeaders: [String] = []

    @Option(name: .customLong("server-replay-extra"), help: ArgumentHelp(
        "What a request with no recorded response gets: forward (the network), 404, or kill (a connection reset).",
        valueName: "forward|404|kill"))
    var extra = "forward"

    @Flag(name: .customLong("server-replay-reuse"), help: "Once a request's recorded responses are used, answer it with the last one again (else it is an extra request).")
    var reuse = false

    @Flag(name: .customLong("server-replay-timing"), help: "Answer after the wait the recording shows (its time to the first response byte), not at once.")
    var timing = false

    /// The options the flags give.
    var options: ServerReplayOptions {
        var options = ServerReplayOptions()
        options.ignoreParams = ignoreParams
        options.ignoreHost = ignoreHost
        options.ignoreContent = ignoreContent
        options.useHeaders = useHeaders
        options.extra = ServerReplayOptions.Extra(rawValue: extra) ?? .forward
        options.reuse = reuse
        options.timing = timing
        return options
    }

    func validate() throws {
        guard ServerReplayOptions.Extra(rawValue: extra) != nil else {
            throw ValidationError("--server-replay-extra must be forward, 404 or kill (got '\(extra)')")
        }
    }

    /// The recordings, read; nil without `--server-replay`.
    func load() throws -> ServerReplaySet? {
        guard !files.isEmpty else { return nil }
        do {
            return try ServerReplaySet(paths: files, options: options)
        } catch {
            throw ValidationError("--server-replay \(error)")
        }
    }
}
