import Foundation
import WireProtocol

/// What an adapter knows of a flow as it starts, in plain values: the one
/// description every client-side and gRPC adapter gives, from which
/// ``FlowRecording`` builds the flow's ``FlowRecorder`` (so no adapter builds
/// one, nor forgets a field another sets).
///
/// ```swift
/// var start = FlowStart(method: "GET", url: "http://svc/items", headers: [], sessionID: 1, taskID: 7)
/// start.source = CaptureSource(client: .vaporClient)
/// start.parentID = CaptureAgent.currentInboundFlowID
/// let flow = FlowRecording(agent: agent, start: start)
/// ```
package struct FlowStart: Sendable {
    package var method: String
    /// As the client has it; redacted when the recorder is built.
    package var url: String
    /// As the app set them, in order.
    package var headers: [HTTPHeader]
    package var sessionID: Int
    package var taskID: Int
    package var source: CaptureSource?
    package var direction: FlowDirection?
    /// The inbound flow whose handler made this request.
    package var parentID: FlowID?
    package var peer: String?
    package var localAddress: String?
    /// A body known whole as the flow starts (kept up to the capture limit).
    package var requestBody: Data?
    /// Fields the client added itself (AsyncHTTPClient's `Host`), apart from the app's.
    package var clientHeaders: [HTTPHeader] = []
    /// When the flow started, when the adapter took the time earlier than
    /// the recorder is built; now otherwise.
    package var startedAt: FlowClock.Start?
    /// For a client that reports no phases itself: the name the measured
    /// phases go under, and when the request began to wait for a connection.
    package var measuredPhases: (source: String, waitStart: FlowClock.Start?)?
    /// The redirects a client followed to get here.
    package var hops: [RedirectHop]?
    package var grpc: GRPCCall?
    package var webSocket: WebSocketSession?
    /// What a viewer's replay, a rule or an edit changed before the start.
    package var changes: FlowChanges?
    /// Whether the response body bytes come after the client removed a
    /// content coding (a server's handler writes them as they go out: no);
    /// nil: as libcurl does, whenever `Content-Encoding` names one (URLSession).
    package var responseBodyIsDecoded: Bool? = false

    package init(method: String, url: String, headers: [HTTPHeader], sessionID: Int, taskID: Int) {
        self.method = method
        self.url = url
        self.headers = headers
        self.sessionID = sessionID
        self.taskID = taskID
    }

    /// The same start, for the request as the viewer's control sends it
    /// (rules applied), with what the control changed.
    func sending(_ request: ExchangeRequest?, changes: FlowChanges?) -> FlowStart {
        var start = self
        if let request, changes != nil {
            start.method = request.method
            start.url = request.url.absoluteString
            start.headers = request.headers
            if !request.bodyStreams { start.requestBody = request.body }
        }
        if let changes { start.changes = changes }
        return start
    }

    /// The flow's recorder, under `id`.
    func recorder(id: FlowID, configuration: CaptureAgent.Configuration, clock: FlowClock) -> FlowRecorder {
        let startedAt = startedAt ?? clock.start()
        var recorder = FlowRecorder(id: id, method: method, url: url, headers: headers, sessionID: sessionID, taskID: taskID,
                                    configuration: configuration, clock: clock, start: startedAt)
        if !clientHeaders.isEmpty { recorder.setClientHeaders(clientHeaders) }
        recorder.source = source
        recorder.direction = direction
        recorder.parentID = parentID
        recorder.peer = peer
        recorder.localAddress = localAddress
        recorder.grpc = grpc
        recorder.webSocket = webSocket
        recorder.responseBodyIsDecoded = responseBodyIsDecoded
        if let measuredPhases {
            // The wait for a connection (connecting included, when the client
            // does not say which) is `blocked`.
            let blocked = measuredPhases.waitStart.map { FlowClock.seconds(from: $0, to: startedAt) }
            recorder.measurePhases(source: measuredPhases.source, blocked: blocked)
        }
        if let hops { recorder.continuing(after: hops) }
        if let requestBody, !requestBody.isEmpty { recorder.setRequestBody(recorder.capped(requestBody)) }
        if let changes { recorder.setChanges(changes) }
        return recorder
    }
}

extension FlowRecording {
    /// Starts a flow described by `start`: builds its recorder and sends
    /// `flowStarted`, or, unbuilt, counts it, and then `start` is never
    /// evaluated (an adapter's description copies headers and formats
    /// addresses, work an unbuilt flow does not pay for). `configuration`:
    /// the one the adapter captured under (the agent's own by default),
    /// read only for a flow that is built too, as an unbuilt flow has no
    /// use for a copy of it (docs/BENCHMARKS.md, "Costs behind the code").
    package convenience init(agent: CaptureAgent, building: Bool = false, start: @autoclosure () -> FlowStart,
                             configuration: @autoclosure () -> CaptureAgent.Configuration? = nil) {
        self.init(agent: agent, building: building) { id in
            start().recorder(id: id, configuration: configuration() ?? agent.configuration, clock: agent.clock)
        }
    }
}
