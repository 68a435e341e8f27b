import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// How a re-sent exchange ends when the viewer's control answers it: a
/// held response let go (as it came, edited, or killed), or a map-local
/// rule's file. On `queue`, as all of ``ResendingFlow``.
extension ResendingFlow {
    /// The whole held response, as the control core sees it.
    func heldExchangeResponse(_ held: HeldResponse) -> ExchangeResponse {
        (held.head as? HTTPURLResponse).map { ExchangeResponse($0, body: held.body) } ?? ExchangeResponse(statusCode: 0, headers: [], body: held.body)
    }

    /// The viewer (or a timeout, or the app) decided about a held response;
    /// the flow recorded an edit.
    func endResponseHold(_ release: ExchangeControl.ResponseRelease) {
        guard let held = heldResponse, held.complete, let flow else { return }
        heldResponse = nil
        let http = held.head as? HTTPURLResponse
        switch release {
        case .kill:
            return endHeld(cancellingTask: true)
        case .cancelled:
            return endHeld(cancellingTask: false)
        case .deliver(let response, let edited):
            guard !clientIsDone else { return endHeld(cancellingTask: false) }
            var head = held.head
            var body = held.body
            if edited, let url = http?.url, let made = response.urlResponse(for: url) {
                head = made
                body = response.body
            }
            let streamed = requestStream.current?.captured
            flow.finish { recorder, _ in recorder.finished(error: nil, requestBody: streamed) }
            deliverWhole(head: head, body: body)
        }
    }

    /// Gives the app a whole response at once (one held at a breakpoint).
    private func deliverWhole(head: URLResponse, body: Data) {
        let delivery = delivery
        if delivery == .wholeBodyOnce, !body.isEmpty, let delegate = completionTaskDelegate, let original,
           let dataTask = task as? URLSessionDataTask {
            original.delegateQueue.addOperation {
                delegate.urlSession(original, dataTask: dataTask, didReceive: body)
            }
        }
        letGoOfTask()
        withClient { client, owner in client.urlProtocol(owner, didReceive: head, cacheStoragePolicy: .notAllowed) }
        withClient(finishing: true) { client, owner in
            if !body.isEmpty { client.urlProtocol(owner, didLoad: body) }
            client.urlProtocolDidFinishLoading(owner)
        }
    }

    /// The flow of a request the agent ends itself, with no network (an
    /// answer, a condition's failure): the app's request and what changed it.
    func recordingWithoutNetwork(task: URLSessionTask, request: URLRequest, internals: TaskInternals, changes: FlowChanges,
                                 agent: CaptureAgent) -> FlowRecording {
        var start = FlowStart(request: request, additionalHeaders: internals.session?.configuration.httpAdditionalHeaders,
                              sessionID: agent.demuxes.demux(for: internals.session).sessionID, taskID: task.taskIdentifier)
        start.parentID = parentID
        start.changes = changes
        start.requestBody = request.httpBody
        return FlowRecording(agent: agent, building: true, start: start)
    }

    /// A map-local rule answered: the app gets the file as a response, and
    /// nothing goes on the network.
    func answerLocally(task: URLSessionTask, request: URLRequest, internals: TaskInternals,
                               response: HTTPURLResponse, data: Data, changes: FlowChanges) {
        guard let agent else { return }
        let flow = recordingWithoutNetwork(task: task, request: request, internals: internals, changes: changes, agent: agent)
        flow.requestEnded()
        flow.respond { recorder in
            let event = recorder.received(response)
            recorder.receivedBody(data)
            return event
        }
        flow.finish { recorder, _ in recorder.finished(error: nil, requestBody: nil) }
        countAnsweredTransfer(task: task, request: request, internals: internals, response: response)
        self.task = nil
        withClient { client, owner in
            client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed)
            if !data.isEmpty { client.urlProtocol(owner, didLoad: data) }
        }
        withClient(finishing: true) { client, owner in client.urlProtocolDidFinishLoading(owner) }
    }

    /// The byte counters corelibs would have set had it sent the request
    /// and read this response (``countBodyToSend(_:)``, a head's length):
    /// the app cannot tell an answer from a transfer by its task.
    private func countAnsweredTransfer(task: URLSessionTask, request: URLRequest, internals: TaskInternals, response: HTTPURLResponse) {
        let body = internals.body ?? Self.body(in: request, of: task)
        countBodyToSend(body)
        // corelibs counts the bytes sent only for a task whose delegate it tells.
        if internals.consumer.delivery == .delegateChunks, case .data(let data) = body {
            ResentTaskFields.shared.setSent(Int64(data.count), on: task)
        }
        ResentTaskFields.shared.setExpectedToReceive(response.expectedContentLength, on: task)
    }
}
