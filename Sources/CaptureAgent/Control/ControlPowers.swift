/// What a viewer's control can do to each kind of client's traffic (when
/// the app allows control): the one place that says what an adapter cannot
/// do, and why. docs/AGENT.md's table of powers by client is checked
/// against it (`ControlPowersTests`), and the scenario table
/// (`ControlScenarioTests`) expects exactly these.
///
/// ```swift
/// CaptureClient.openAPI.limitation(.replay)   // "the middleware has no transport of its own…"
/// ```
package enum ControlPower: String, CaseIterable, Sendable {
    case mapRemote = "map remote"
    case mapLocal = "map local"
    case headerRule = "header rule"
    case requestBreakpoint = "request breakpoint"
    case responseBreakpoint = "response breakpoint"
    case kill
    case replay
    /// A `condition` rule's latency and failures.
    case condition = "condition"
    /// A `condition` rule's bandwidth on the response body.
    case pacing = "pacing"
}

/// The clients the agent captures, as the table of powers names them.
package enum CaptureClient: String, CaseIterable, Sendable {
    case urlSession = "URLSession"
    case urlSessionDownload = "URLSession download tasks"
    case asyncHTTPClient = "AsyncHTTPClient"
    case openAPI = "OpenAPI middleware"
    case vaporClient = "Vapor client"
    case hummingbirdInbound = "Hummingbird (inbound)"
    case vaporInbound = "Vapor (inbound)"
    case grpc = "gRPC (client and server)"

    /// Why this client cannot have `power`; nil when it can.
    package func limitation(_ power: ControlPower) -> String? {
        switch (self, power) {
        case (.urlSessionDownload, .replay), (.openAPI, .mapRemote), (.openAPI, .mapLocal), (.openAPI, .headerRule),
             (.openAPI, .requestBreakpoint), (.openAPI, .responseBreakpoint), (.openAPI, .kill),
             (.openAPI, .condition), (.openAPI, .pacing),
             (.urlSession, _), (.asyncHTTPClient, _), (.vaporClient, _):
            nil
        case (.urlSessionDownload, _):
            "corelibs cannot run a download through the agent's own protocol, so a download stays with Foundation's, which the agent only observes"
        case (.openAPI, .replay):
            "the middleware has no transport of its own to send a request again with"
        case (.hummingbirdInbound, .mapRemote), (.vaporInbound, .mapRemote):
            "a service answers its own requests: there is no remote to map one to (the agent is not a reverse proxy)"
        case (.hummingbirdInbound, .replay), (.vaporInbound, .replay):
            "the agent has no client for a request its service received; netinspect replays it with its own client, to the service's address"
        case (.hummingbirdInbound, .pacing), (.vaporInbound, .pacing):
            "the middleware hands the framework a response whose body the framework writes itself: pacing it is not built"
        case (.hummingbirdInbound, _), (.vaporInbound, _), (.grpc, .requestBreakpoint), (.grpc, .responseBreakpoint), (.grpc, .kill):
            nil
        case (.grpc, .mapRemote):
            "a gRPC client's transport is bound to its one target when the app makes it: the wrapper has no way to send a call elsewhere"
        case (.grpc, .mapLocal):
            "a gRPC answer is metadata, messages and a status, not a file: a local answer for a call is not built"
        case (.grpc, .headerRule):
            "rules are not applied to gRPC metadata yet: the wrappers could set it before the call goes out, but that is not built"
        case (.grpc, .condition), (.grpc, .pacing):
            "the wrappers do not ask the rules about a call, so network conditions are not built for gRPC"
        case (.grpc, .replay):
            "the wrapper has no client of its own, and a call's messages stream: it keeps nothing to make the call again with"
        }
    }

    /// Whether this client has `power`.
    package func can(_ power: ControlPower) -> Bool {
        limitation(power) == nil
    }
}
