import CaptureAgent
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// `netinspect --demo`: a demo app inside the inspector's process. A
/// loopback ``DemoServer`` and a client whose `URLSession` goes through the
/// real ``CaptureAgent``, which streams to the inspector over its real socket.
///
/// The client sends one request of every kind right away, 60 ms apart
/// (``DemoTraffic/cycle``), then one to three every `interval`. It runs on Swift concurrency's threads and
/// Foundation's, never on the caller's: the main thread stays the UI's.
///
/// ```swift
/// let endpoints = try listener.start()
/// let demo = try DemoWorkload.start(inspector: endpoints, token: nil)
/// defer { demo.stop() }
/// ```
final class DemoWorkload: Sendable {
    /// The app name the agent sends in its hello.
    static let appName = "demo-shop"

    private let server: DemoServer
    private let agent: CaptureAgent
    private let session: URLSession
    private let loop: Task<Void, Never>
    private let loopEnded = DispatchSemaphore(value: 0)
    private let gate = SendGate()

    /// Starts the server, the agent (the process's one agent) and the client.
    /// Call it after the listener is bound, with what `start()` returned, and
    /// before anything else in the process creates a `URLSession`.
    /// - Parameters:
    ///   - endpoints: the listener's bound endpoints; the agent connects to
    ///     the first Unix socket, else the first TCP address (a wildcard
    ///     address through loopback).
    ///   - token: the listener's token, if it requires one.
    ///   - interval: the time between ticks after the first full cycle.
    static func start(inspector endpoints: [Endpoint], token: String?, interval: Duration = .seconds(1)) throws -> DemoWorkload {
        let server = try DemoServer()
        do {
            var configuration = CaptureAgent.Configuration(destination: destination(for: endpoints))
            configuration.appName = appName
            configuration.token = token
            // Quitting must not wait for long on events nobody will read.
            configuration.flushTimeout = 0.3
            // So replay (r), breakpoints (i) and the rules view work in the demo.
            configuration.allowsControl = true
            let agent = try CaptureAgent.start(configuration)
            return DemoWorkload(server: server, agent: agent, interval: interval)
        } catch {
            server.shutdown()
            throw error
        }
    }

    private init(server: DemoServer, agent: CaptureAgent, interval: Duration) {
        self.server = server
        self.agent = agent
        // Ephemeral: no cookie or cache files written on the user's disk.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        self.session = session
        let traffic = DemoTraffic(port: server.port, refusedPort: server.refusedPort)
        let ended = loopEnded
        let gate = gate
        loop = Task.detached {
            await withDiscardingTaskGroup { group in
                var batch = traffic.cycle
                var ticks = 0
                while !Task.isCancelled {
                    for (index, request) in batch.enumerated() {
                        group.addTask {
                            // Staggered a little, as an app's calls are.
                            try? await Task.sleep(for: .milliseconds(60 * index))
                            // With a completion handler, as apps write it: the agent
                            // captures in place (wire headers, libcurl's phases), where a
                            // task without handler or delegate would be re-sent.
                            gate.ifOpen { session.dataTask(with: request) { _, _, _ in }.resume() }
                        }
                    }
                    try? await Task.sleep(for: interval)
                    ticks += 1
                    batch = traffic.tick(ticks)
                }
                group.cancelAll()
            }
            ended.signal()
        }
    }

    /// Stops the client, the agent and the server; returns within about half
    /// a second. Calling it again does nothing.
    ///
    /// Requests still running are not cancelled: they fail when the server
    /// closes their connections. Cancelling a captured task as it completes
    /// traps inside swift-corelibs-foundation ("Trying to access a behaviour
    /// for a task that in not in the registry": `cancel()` reports the
    /// cancellation to a task its protocol has just finished).
    func stop() {
        guard gate.close(then: session.finishTasksAndInvalidate) else { return }
        loop.cancel()
        _ = loopEnded.wait(timeout: .now() + 0.3)
        agent.stop()
        server.shutdown()
    }

    /// Where the agent sends events, given the listener's bound endpoints.
    static func destination(for endpoints: [Endpoint]) -> Endpoint? {
        if let unix = endpoints.first(where: { if case .unix = $0 { true } else { false } }) { return unix }
        guard case let .tcp(host, port)? = endpoints.first else { return nil }
        switch host {
        case "0.0.0.0", "": return .tcp(host: "127.0.0.1", port: port)
        case "::": return .tcp(host: "::1", port: port)
        default: return .tcp(host: host, port: port)
        }
    }
}

/// Whether the demo's requests may still be sent. Foundation traps on a task
/// made on an invalidated session, so making one and invalidating take turns.
///
/// An NSLock (a pthread mutex) rather than Synchronization.Mutex, for the
/// reason `Inbox` gives: ThreadSanitizer understands it.
private final class SendGate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = true  // guarded by lock

    /// Runs `body` if the gate is open, holding it open meanwhile.
    func ifOpen(_ body: () -> Void) {
        lock.withLock {
            if isOpen { body() }
        }
    }

    /// Closes the gate and runs `body`, the first time; returns whether it did.
    func close(then body: () -> Void) -> Bool {
        lock.withLock {
            guard isOpen else { return false }
            isOpen = false
            body()
            return true
        }
    }
}
