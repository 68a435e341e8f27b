/// One source of flows for as long as netinspect runs, named by what it is:
/// an app's agent, an OpenTelemetry service, a file, or netinspect itself.
/// Every flow in the store came from one, and what netinspect may do with a
/// flow (replay it through its app, count its app as connected) depends on
/// which.
///
/// ```swift
/// inbox.post(.connected(.agent(1), hello, peer: "unix:/tmp/netinspect.sock"))
/// if !session.agents[index].connection.isApp { … }   // a file, or netinspect's own replays
/// ```
package enum ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// An app's agent, numbered from 1 in the order the listener accepted it.
    case agent(UInt64)
    /// An OpenTelemetry service, numbered from 0 in the order the OTLP
    /// receiver first heard of it.
    case otlpService(Int)
    /// The flows of a file opened with `--read`.
    case file
    /// netinspect's own client, for replays the app cannot make.
    case netinspect

    /// The agent accepted `number`th: `ConnectionID(1)` is `.agent(1)`.
    package init(_ number: UInt64) { self = .agent(number) }

    /// Whether an app sends these flows (its agent, or its OpenTelemetry
    /// exporter), not a file nor netinspect itself.
    package var isApp: Bool {
        switch self {
        case .agent, .otlpService: true
        case .file, .netinspect: false
        }
    }

    package var description: String {
        switch self {
        case .agent(let number): "#\(number)"
        case .otlpService(let number): "otlp#\(number)"
        case .file: "file"
        case .netinspect: "netinspect"
        }
    }
}
