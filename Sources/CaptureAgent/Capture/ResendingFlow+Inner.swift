import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The inner task's callbacks (on the demux's delegate queue; each hops to
/// the flow's `queue`), passed on to the app's task as corelibs would.
extension ResendingFlow {
    func innerWillRedirect(_ response: HTTPURLResponse, to newRequest: URLRequest, decide: @escaping @Sendable (URLRequest?) -> Void) {
        queue.async {
            self.countResponseHead()
            guard !self.clientIsDone, let task = self.task, let original = self.original, let delegate = task.delegate else {
                // Without a delegate corelibs follows with the session's cookies added.
                let configured = self.original.map { Self.addingCookies(to: newRequest, from: $0.configuration) } ?? newRequest
                self.flow?.update { $0.redirected(response, to: configured) }
                self.follows(configured)
                return decide(configured)
            }
            // The app's own redirect policy, asked the way corelibs asks it:
            // the task's delegate, on the original session's delegate queue.
            original.delegateQueue.addOperation {
                delegate.urlSession(original, task: task, willPerformHTTPRedirection: response, newRequest: newRequest) { decision in
                    self.queue.async {
                        if let decision {
                            self.flow?.update { $0.redirected(response, to: decision) }
                            self.follows(decision)
                        }
                        decide(decision)
                    }
                }
            }
        }
    }

    /// What corelibs does to a redirect it follows without a delegate
    /// (`URLSession._Configuration.setCookies(on:)`).
    static func addingCookies(to request: URLRequest, from configuration: URLSessionConfiguration) -> URLRequest {
        guard configuration.httpShouldSetCookies, let storage = configuration.httpCookieStorage, let url = request.url,
              let cookies = storage.cookies(for: url),
              let value = HTTPCookie.requestHeaderFields(with: cookies)["Cookie"], !value.isEmpty
        else { return request }
        var request = request
        request.setValue(value, forHTTPHeaderField: "Cookie")
        return request
    }

    func innerDidReceive(
        _ challenge: URLAuthenticationChallenge,
        answer: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        queue.async {
            guard !self.clientIsDone, let task = self.task, let original = self.original, let delegate = task.delegate else {
                return answer(.performDefaultHandling, nil)
            }
            original.delegateQueue.addOperation {
                delegate.urlSession(original, task: task, didReceive: challenge, completionHandler: answer)
            }
        }
    }

    /// Asked synchronously on the inner task's work queue, and corelibs goes
    /// on setting up the transfer inside `provide`. Answering from another
    /// thread races libcurl's multi handle (a `try!` crash in corelibs was
    /// seen under ThreadSanitizer), so the app's delegate is asked right
    /// here, on this thread, just as corelibs asks it without the agent.
    func innerNeedsBodyStream(_ provide: @escaping @Sendable (InputStream?) -> Void) {
        guard let source = streamSource.current else { return provide(nil) }
        source.delegate.urlSession(source.original, task: source.task) { stream in
            let tee = stream.map { TeeInputStream(source: $0, limit: source.limit) }
            self.requestStream.withLock { $0 = tee }
            provide(tee)
        }
    }

    func innerDidSendBody(_ sent: Int64, total: Int64, expected: Int64) {
        queue.async {
            self.flow?.update { $0.markRequestSent() }
            guard !self.clientIsDone, let task = self.task, let original = self.original, let delegate = self.uploadDelegate else { return }
            self.countSent(total)
            original.delegateQueue.addOperation {
                delegate.urlSession(original, task: task, didSendBodyData: sent, totalBytesSent: total, totalBytesExpectedToSend: expected)
            }
        }
    }

    func innerDidReceive(_ response: URLResponse) {
        queue.async { self.paced(.head(response)) { self.deliverHead(response) } }
    }

    func deliverHead(_ response: URLResponse) {
        do {
            // A second response means corelibs retried (an answered 401):
            // as in its own transfer, only the last response's body counts.
            self.bufferedBody = Data()
            self.countResponseHead()
            self.flow?.respond(replacing: true) { $0.received(response) }
            // A breakpoint decides on the response head; the app sees it once the hold ends.
            if self.controlled?.responseArrived() == .hold {
                self.heldResponse = HeldResponse(head: response)
                return
            }
            self.heldResponse = nil
            // Custom protocols are never cached by corelibs; say so explicitly.
            self.withClient { client, owner in client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed) }
        }
    }

    func innerDidReceive(_ data: Data) {
        queue.async { self.paced(.data(data)) { self.deliverData(data) } }
    }

    func deliverData(_ data: Data) {
        do {
            data.withUnsafeBytes { self.flow?.responseBody($0) }
            if var held = self.heldResponse {
                held.body.append(data)
                guard held.body.count > self.controlled?.holdLimit ?? 0 else {
                    self.heldResponse = held
                    return
                }
                // Too large to hold whole: the app gets it unheld, as it comes,
                // so a breakpoint never costs more memory than the capture limit.
                self.heldResponse = nil
                self.controlled?.bodyOutgrewHold()
                let head = held.head
                self.withClient { client, owner in client.urlProtocol(owner, didReceive: head, cacheStoragePolicy: .notAllowed) }
                return self.forward(held.body)
            }
            self.forward(data)
        }
    }

    /// Passes response body bytes on to the app, as its task expects them. Call on `queue`.
    private func forward(_ data: Data) {
        guard !clientIsDone else { return }
        switch delivery {
        case .delegateChunks:
            withClient { client, owner in client.urlProtocol(owner, didLoad: data) }
        case .wholeBodyOnce:
            // `didLoad` replaces the stored body: hand it over once, whole.
            bufferedBody.append(data)
            // The client does not pass chunks to an async call's task delegate; corelibs does.
            if let delegate = completionTaskDelegate, let original, let dataTask = task as? URLSessionDataTask {
                original.delegateQueue.addOperation {
                    delegate.urlSession(original, dataTask: dataTask, didReceive: data)
                }
            }
        }
    }

    func innerDidComplete(error: Error?) {
        queue.async { self.paced(.end(error)) { self.deliverEnd(error: error) } }
    }

    func deliverEnd(error: Error?) {
        do {
            if var held = self.heldResponse, error == nil, let controlled = self.controlled, !controlled.recording.isFinished,
               !self.clientIsDone {
                // The whole response is in: hold it for the viewer.
                held.complete = true
                self.heldResponse = held
                controlled.holdResponse(self.heldExchangeResponse(held)) { release in
                    self.queue.async { self.endResponseHold(release) }
                }
                return
            }
            if let held = self.heldResponse {
                // Failed after the head (or cancelled): the app gets what it was owed, then the outcome.
                self.heldResponse = nil
                self.withClient { client, owner in client.urlProtocol(owner, didReceive: held.head, cacheStoragePolicy: .notAllowed) }
                self.forward(held.body)
            }
            let streamed = self.requestStream.current?.captured
            self.flow?.finish { recorder, _ in recorder.finished(error: error, requestBody: streamed) }
            self.letGoOfTask()
            let body = self.delivery == .wholeBodyOnce ? self.bufferedBody : Data()
            self.bufferedBody = Data()
            self.withClient(finishing: true) { client, owner in
                if let error { return client.urlProtocol(owner, didFailWithError: error) }
                if !body.isEmpty { client.urlProtocol(owner, didLoad: body) }
                client.urlProtocolDidFinishLoading(owner)
            }
        }
    }
}
