import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import CaptureAgent

extension TaskInternals {
    /// `TaskInternals(of:)` read as the agent reads it, on the task's work
    /// queue. corelibs registers a new task in its session's registry
    /// asynchronously on that queue, and for a session without a delegate
    /// the reading looks the task up there: from another thread that races
    /// the registration (a CI run crashed on it, SIGSEGV in a dictionary
    /// lookup). The queue field itself is set when the task is made.
    static func onWorkQueue(of task: URLSessionTask) -> TaskInternals {
        guard let queue = Fields.shared.workQueue?.value(in: task, as: DispatchQueue.self) else { return TaskInternals(of: task) }
        return queue.sync { TaskInternals(of: task) }
    }

    /// ``delivery(of:in:)`` on the task's work queue, for the same reason.
    static func deliveryOnWorkQueue(of task: URLSessionTask, in session: URLSession) -> Delivery? {
        guard let queue = Fields.shared.workQueue?.value(in: task, as: DispatchQueue.self) else { return nil }
        return queue.sync { delivery(of: task, in: session) }
    }
}
