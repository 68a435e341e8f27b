// Built with the Hummingbird or Vapor trait (both on by default; Package.swift).
#if Hummingbird || Vapor
import CaptureAgent
import Foundation
import NIOConcurrencyHelpers
import WireProtocol

/// The server frameworks whose inbound requests the agent captures, each
/// serving the same routes, so one table of scenarios runs against all of
/// them (`InboundCaptureScenarioTests`, `InboundControlScenarioTests`):
/// - `GET /text`: answers `hello`, 200, `text/plain`, `X-Served: 1`;
/// - `POST /echo`, `PUT /echo`: answers the body it read, `text/plain`,
///   `X-Method` (the method it saw) and `X-Rule` (the request's `X-Rule`
///   field, or `none`);
/// - `GET /stream`: three chunks `chunk0\n`…, each written once the client
///   has the one before (``StreamGate``);
/// - `GET /refuse`: the framework's 400 for a thrown "bad request" error;
/// - `GET /boom`: a thrown error of the app's own (500);
/// - `GET /whoami`: the inbound flow the handler runs in (`none` outside one).
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

    /// The client its flows are recorded as coming from.
    var recordedClient: CaptureSource.Client {
        switch self {
        #if Hummingbird
        case .hummingbird: .hummingbird
        #endif
        #if Vapor
        case .vapor: .vapor
        #endif
        }
    }

    /// Whether a streamed response's body reaches the log: Vapor gives a
    /// middleware no sight of it (docs/AGENT.md), only of its status and fields.
    var recordsStreamedBodies: Bool {
        switch self {
        #if Hummingbird
        case .hummingbird: true
        #endif
        #if Vapor
        case .vapor: false
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
    /// The `/stream` route's side of the lockstep.
    var stream: StreamGate { get }
    func stop() async
}

/// The app's own error, thrown by `/boom`.
struct ScenarioError: Error {}

/// Counts handler runs across the service's tasks.
final class RunCounter: Sendable {
    private let count = NIOLockedValueBox(0)
    func increment() { count.withLockedValue { $0 += 1 } }
    var value: Int { count.withLockedValue { $0 } }
}

/// A streamed response in lockstep with its client: the handler writes a
/// chunk and waits until the client has it before writing the next, so the
/// client can tell each chunk reached it on its own. Anything on the way
/// that held the stream back would leave the handler waiting; it gives up
/// after `patience` (a bound for a broken build, not a speed target) and
/// the client then sees chunks arrive together.
final class StreamGate: Sendable {
    static let chunks = 3
    private let counts = NIOLockedValueBox((written: 0, received: 0))
    private let patience = 10.0

    /// The handler is about to write one more chunk (counted before the
    /// write, which can reach the client before it returns).
    func writes() { counts.withLockedValue { $0.written += 1 } }

    /// Waits until the client has every chunk written so far.
    func waitForTheClient() async {
        _ = await waitUntil(timeout: patience, every: .milliseconds(5)) { counts.withLockedValue { $0.received >= $0.written } }
    }

    /// The client has `received` chunks; returns how many the handler had
    /// begun to write by then.
    func clientHas(_ received: Int) -> Int {
        counts.withLockedValue {
            $0.received = received
            return $0.written
        }
    }

    /// The text of chunk `index`.
    static func chunk(_ index: Int) -> String { "chunk\(index)\n" }
}
#endif
