import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes an app's task's byte counters on the re-sending path, where
/// corelibs' own HTTP protocol never runs on that task and so never sets
/// them. The values are the inner task's, written at the moments corelibs
/// writes them on a task it runs itself (swift-corelibs-foundation 6.3.1):
///
/// - `countOfBytesExpectedToSend`: the body's length when it is known (data
///   or file, not a stream), set as the transfer is configured
///   (`HTTPURLProtocol.configureEasyHandle`);
/// - `countOfBytesExpectedToReceive`: at every complete response head,
///   redirects included: `Content-Length`, or -1 without one or with a
///   `Content-Encoding` other than `identity`;
/// - `countOfBytesSent`: added to before each `didSendBodyData`, and only
///   when a delegate is told (a session delegate, or an async call's task
///   delegate): with a plain completion handler it stays 0;
/// - `countOfBytesReceived`: only for download tasks, never on this path
///   (a data task's stays 0 with or without the agent).
///
/// corelibs' setters are internal, so the stored fields are written in
/// place (``StoredField/store(_:in:)``): `_countOfBytesSent` inside the
/// task's `syncQ`, the serial queue its getter and setter use, so a reader
/// never sees it half written; the two `countOfBytesExpectedTo…` are plain
/// stored properties that corelibs itself writes from libcurl's thread
/// with no lock, and an aligned eight-byte store cannot tear either. A
/// field that is missing or not exactly `Int64` is left alone.
///
/// The setters' observers, which recompute `progress` (``progress(of:)``),
/// do not run for such a store; the agent sets `progress` itself, as the
/// observers would.
struct TaskCounters: @unchecked Sendable {
    static let shared = TaskCounters()

    private let sent = StoredField("_countOfBytesSent", in: URLSessionTask.self)
    private let expectedToSend = StoredField("countOfBytesExpectedToSend", in: URLSessionTask.self)
    private let expectedToReceive = StoredField("countOfBytesExpectedToReceive", in: URLSessionTask.self)
    private let syncQueue = StoredField("syncQ", in: URLSessionTask.self)

    /// Whether every field was found with the type expected.
    var isComplete: Bool {
        [sent, expectedToSend, expectedToReceive].allSatisfy { $0?.type == Int64.self } && syncQueue?.type == DispatchQueue.self
    }

    /// Sets `task`'s `countOfBytesExpectedToSend`.
    func setExpectedToSend(_ value: Int64, on task: URLSessionTask) {
        expectedToSend?.store(value, in: task)
    }

    /// Sets `task`'s `countOfBytesExpectedToReceive`.
    func setExpectedToReceive(_ value: Int64, on task: URLSessionTask) {
        expectedToReceive?.store(value, in: task)
    }

    /// Sets `task`'s `countOfBytesSent`, inside the task's `syncQ`.
    func setSent(_ value: Int64, on task: URLSessionTask) {
        guard let sent, let queue = syncQueue?.value(in: task, as: DispatchQueue.self) else { return }
        queue.sync { _ = sent.store(value, in: task) }
    }
}
