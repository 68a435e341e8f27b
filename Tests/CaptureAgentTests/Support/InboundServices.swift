// Built with the Hummingbird or Vapor trait (both on by default; Package.swift).
#if Hummingbird || Vapor
import CaptureAgent
import Foundation
import NIOConcurrencyHelpers

/// The server frameworks whose inbound requests the agent captures, each
/// serving the same routes, so one table of scenarios runs against all of
/// them (`InboundControlScenarioTests`):
/// - `POST /echo`: answers the body it read, `X-Method` (the method it saw)
///   and `X-Rule` (the request's `X-Rule` field, or `none`);
/// - `GET /text`: answers `hello`, 200, `text/plain`.
/// Every handler run is counted, so a test can tell that a handler did not run.
enum InboundFramework: String, CaseIterable, Sendable {
    #if Hummingbird
    case hummingbird
    #endif
    #if Vapor
    case vapor
    #endif

    /// The client the table of powers names.
    var client: CaptureClient {
        switch self {
        #if Hummingbird
        case .hummingbird: .hummingbirdInbound
        #endif
        #if Vapor
        case .vapor: .vaporInbound
        #endif
        }
    }

    /// Starts the routes on 127.0.0.1 (a free port), captured into `agent`
    /// when one is given.
    func start(captureInto agent: CaptureAgent?) async throws -> any InboundService {
        switch self {
        #if Hummingbird
        case .hummingbird: try await HummingbirdScenarioService.start(captureInto: agent)
        #endif
        #if Vapor
        case .vapor: try await VaporScenarioService.start(captureInto: agent)
        #endif
        }
    }
}

/// A running service of the scenario routes.
protocol InboundService: Sendable {
    var port: Int { get }
    /// How many times a handler ran.
    var handlerRuns: Int { get }
    func stop() async
}

/// Counts handler runs across the service's tasks.
final class RunCounter: Sendable {
    private let count = NIOLockedValueBox(0)
    func increment() { count.withLockedValue { $0 += 1 } }
    var value: Int { count.withLockedValue { $0 } }
}
#endif
