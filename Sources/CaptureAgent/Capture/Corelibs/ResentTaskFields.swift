import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes what corelibs' own HTTP protocol sets on a task it runs, onto an
/// app's task on the re-sending path, where that protocol never runs on it:
/// the byte counters and `currentRequest`. The values are the inner task's,
/// written at the moments corelibs writes them on a task it runs itself
/// (swift-corelibs-foundation 6.3.1):
///
/// - `currentRequest`: the request of each new transfer, so after a redirect
///   the request that followed it (`_NativeProtocol.startNewTransfer`);
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
/// place (``StoredField/store(_:in:)``): `_countOfBytesSent` and
/// `_currentRequest` inside the task's `syncQ`, the serial queue their
/// getters and setters use, so a reader never sees one half written; the
/// two `countOfBytesExpectedTo…` are plain stored properties that corelibs
/// itself writes from libcurl's thread with no lock, and an aligned
/// eight-byte store cannot tear either. A field that is missing or not of
/// exactly the type expected is left alone.
///
/// The setters' observers, which recompute `progress`, do not run for such
/// a store; the re-sending flow has corelibs run that recompute afterwards
/// (`ResendingFlow.refreshProgress(of:)`).
struct ResentTaskFields: @unchecked Sendable {
    static let shared = ResentTaskFields()

    private let sent = StoredField("_countOfBytesSent", in: URLSessionTask.self)
    private let expectedToSend = StoredField("countOfBytesExpectedToSend", in: URLSessionTask.self)
    private let expectedToReceive = StoredField("countOfBytesExpectedToReceive", in: URLSessionTask.self)
    private let currentRequest = StoredField("_currentRequest", in: URLSessionTask.self)
    private let syncQueue = StoredField("syncQ", in: URLSessionTask.self)

    /// Whether every field was found with the type expected.
    var isComplete: Bool {
        [sent, expectedToSend, expectedToReceive].allSatisfy { $0?.type == Int64.self }
            && currentRequest?.type == URLRequest?.self && syncQueue?.type == DispatchQueue.self
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
        guard let sent else { return }
        inSyncQueue(of: task) { sent.store(value, in: task) }
    }

    /// Sets `task`'s `currentRequest`, inside the task's `syncQ`.
    func setCurrentRequest(_ request: URLRequest, on task: URLSessionTask) {
        guard let currentRequest else { return }
        inSyncQueue(of: task) { currentRequest.store(Optional(request), in: task) }
    }

    private func inSyncQueue(of task: URLSessionTask, _ store: () -> Bool) {
        guard let queue = syncQueue?.value(in: task, as: DispatchQueue.self) else { return }
        _ = queue.sync(execute: store)
    }
}
