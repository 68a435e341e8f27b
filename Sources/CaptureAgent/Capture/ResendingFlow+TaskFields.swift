import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's task's byte counters and `currentRequest` on the re-sending
/// path: what corelibs sets on a task it runs itself, taken from the inner
/// task (which corelibs does run) at the same moments, and written with
/// ``ResentTaskFields``. All on `queue`, before the app is told what the
/// value goes with.
extension ResendingFlow {
    /// As the transfer starts: the length of a body whose length is known
    /// (data or file; a stream's is not), as `configureEasyHandle` sets it.
    func countBodyToSend(_ body: TaskInternals.Body) {
        guard let task else { return }
        let length: Int64
        switch body {
        case .data(let data):
            length = Int64(data.count)
        case .file(let url):
            guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber else { return }
            length = size.int64Value
        case .none, .stream, .askDelegate:
            return
        }
        ResentTaskFields.shared.setExpectedToSend(length, on: task)
        refreshProgress(of: task)
    }

    /// At a complete response head, a redirect's included: the inner task's
    /// `countOfBytesExpectedToReceive`, which corelibs set from that head
    /// before telling anyone about it.
    func countResponseHead() {
        guard let task, let innerTask else { return }
        ResentTaskFields.shared.setExpectedToReceive(innerTask.countOfBytesExpectedToReceive, on: task)
        refreshProgress(of: task)
    }

    /// Before `didSendBodyData`: corelibs counts the bytes sent only for a
    /// task whose delegate it tells (``uploadDelegate``).
    func countSent(_ total: Int64) {
        guard let task, uploadDelegate != nil else { return }
        ResentTaskFields.shared.setSent(total, on: task)
        refreshProgress(of: task)
    }

    /// A redirect is followed with `request`: the app's task's `currentRequest`.
    func follows(_ request: URLRequest) {
        guard let task else { return }
        ResentTaskFields.shared.setCurrentRequest(request, on: task)
    }

    /// corelibs recomputes `progress` from the counters in their setters'
    /// observers (`updateProgress()`, internal, on the task's work queue),
    /// which a store into the field skips. The one public property whose
    /// observer runs the same code is `countOfBytesClientExpectsToReceive`:
    /// setting it to the value it holds changes nothing else.
    private func refreshProgress(of task: URLSessionTask) {
        let unchanged = task.countOfBytesClientExpectsToReceive
        task.countOfBytesClientExpectsToReceive = unchanged
    }
}
