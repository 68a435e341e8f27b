import CaptureAgent
import Foundation
import WireProtocol
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session delegate of ``ReplayClient``: what each request has received
/// so far, and its ``FlowFinished`` when it ends. A delegate rather than
/// `data(for:)`, which would hold a whole body in memory however large;
/// here at most ``ReplayClient/bodyCap`` bytes are kept and the rest only
/// counted.
///
/// corelibs calls it on the session's serial delegate queue; ``begin(_:id:started:finish:)``
/// and ``timeOut(_:)`` come from other threads, hence the lock.
///
/// ```swift
/// let transfers = ReplayTransfers(bodyCap: 1 << 20)
/// let session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: queue)
/// transfers.begin(task, id: id, started: Date()) { finished in inbox.post(…) }
/// ```
final class ReplayTransfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// The domain of the flows' errors.
    static let errorDomain = "URLSession"

    /// One request in flight.
    private struct Transfer {
        var id: FlowID
        var started: Date
        var finish: @Sendable (FlowFinished) -> Void
        var response: HTTPURLResponse?
        var firstResponseByte: Double?
        var body = Data()
        var size = 0
        /// A 401 whose challenge was declined: the response is the answer.
        var declinedChallenge = false
        var timedOut = false

        /// Counts every byte; keeps the first `cap`.
        mutating func receive(_ data: Data, keepingAtMost cap: Int) {
            size += data.count
            if body.count < cap { body.append(data.prefix(cap - body.count)) }
        }
    }

    private let bodyCap: Int
    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    init(bodyCap: Int) {
        self.bodyCap = bodyCap
    }

    /// Watches `task` until it ends; `finish` gets its flow's end, once.
    func begin(_ task: URLSessionTask, id: FlowID, started: Date, finish: @escaping @Sendable (FlowFinished) -> Void) {
        lock.withLock { transfers[task.taskIdentifier] = Transfer(id: id, started: started, finish: finish) }
    }

    /// Ends `task` as timed out if it is still running.
    func timeOut(_ task: URLSessionTask) {
        let running = lock.withLock { () -> Bool in
            guard transfers[task.taskIdentifier] != nil else { return false }
            transfers[task.taskIdentifier]?.timedOut = true
            return true
        }
        if running { task.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock {
            guard let started = transfers[dataTask.taskIdentifier]?.started else { return }
            transfers[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
            transfers[dataTask.taskIdentifier]?.firstResponseByte = Date().timeIntervalSince(started)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { transfers[dataTask.taskIdentifier]?.receive(data, keepingAtMost: bodyCap) }
    }

    /// Redirects are not followed: corelibs then hands over the redirect
    /// itself, with its body, as the response.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    /// A 401 with a Basic or Digest challenge. corelibs would wait for
    /// credentials forever (no proposed credential, nothing to retry with);
    /// declining cancels the task, and the 401 already received is its answer,
    /// as any other client would show it.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        lock.withLock { transfers[task.taskIdentifier]?.declinedChallenge = true }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = lock.withLock({ transfers.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.finish(Self.finished(transfer, error: error))
    }

    private static func finished(_ transfer: Transfer, error: (any Error)?) -> FlowFinished {
        var timing = Timing(startedAt: transfer.started)
        timing.firstResponseByte = transfer.firstResponseByte
        timing.finished = Date().timeIntervalSince(transfer.started)
        if transfer.timedOut {
            let failure = FlowError(domain: errorDomain, code: NSURLErrorTimedOut,
                                    message: "no complete answer within \(Int(ReplayClient.timeout)) s")
            return FlowFinished(id: transfer.id, state: .failed, error: failure, timing: timing)
        }
        if let error, !(transfer.declinedChallenge && transfer.response != nil) {
            let nsError = error as NSError
            let failure = FlowError(domain: errorDomain, code: nsError.code, message: nsError.localizedDescription)
            return FlowFinished(id: transfer.id, state: .failed, error: failure, timing: timing)
        }
        guard let answer = transfer.response else {
            let failure = FlowError(domain: errorDomain, code: NSURLErrorBadServerResponse, message: "no response")
            return FlowFinished(id: transfer.id, state: .failed, error: failure, timing: timing)
        }
        let fields = answer.allHeaderFields.reduce(into: [String: String]()) { fields, field in
            guard let name = field.key.base as? String else { return }
            fields[name] = field.value as? String ?? "\(field.value)"
        }
        var response = Response(statusCode: answer.statusCode, headers: FlowRecorder.sortedHeaders(fields),
                                mimeType: MediaType.essence(of: fields.first { $0.key.lowercased() == "content-type" }?.value))
        if transfer.size > 0 {
            // libcurl removed any content coding it knows; the headers still name it.
            response.body = CapturedBody(data: transfer.body, size: transfer.size, isTruncated: transfer.size > transfer.body.count,
                                         isDecoded: FlowRecorder.isDecoded(response))
        }
        return FlowFinished(id: transfer.id, state: .completed, response: response, timing: timing)
    }
}
