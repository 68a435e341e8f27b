import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// A real ``InspectorListener`` on a Unix socket of its own, with a thread
/// draining its ``Inbox`` and counting finished flows, as the inspector's UI
/// thread would (minus the store and the terminal).
final class BenchInspector: @unchecked Sendable {
    let endpoint: Endpoint
    private let listener: InspectorListener
    private let inbox = Inbox()
    // Guarded by `lock`.
    private let lock = NSLock()
    private var finished = 0
    private var stopping = false
    private let drained = DispatchSemaphore(value: 0)

    init() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-\(getpid()).sock").path
        endpoint = .unix(path: path)
        listener = InspectorListener(configuration: ListenerConfiguration(endpoints: [endpoint]), inbox: inbox)
        do {
            _ = try listener.start()
        } catch {
            throw BenchmarkError(description: "capture benchmark: inspector listener: \(error)")
        }
        let thread = Thread { [self] in drain() }
        thread.name = "netinspect-bench.inspector"
        thread.start()
    }

    private func drain() {
        while !lock.withLock({ stopping }) {
            var flows = 0
            for event in inbox.wait(timeout: .milliseconds(100)) {
                switch event {
                case .message(_, .flowFinished): flows += 1
                // A flow that ended before its start was written comes finished in one message.
                case .message(_, .flowStarted(let log)) where log.state.isFinal: flows += 1
                default: break
                }
            }
            if flows > 0 { lock.withLock { finished += flows } }
        }
        drained.signal()
    }

    /// Finished flows received so far.
    var flowsFinished: Int { lock.withLock { finished } }

    /// Waits until `target` flows have finished or `timeout` passes; returns the count.
    func waitForFlows(_ target: Int, timeout: Double) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while flowsFinished < target, Date() < deadline { usleep(5_000) }
        return flowsFinished
    }

    func shutdown() {
        listener.shutdown()
        lock.withLock { stopping = true }
        drained.wait()
    }
}
