import Foundation
import WireProtocol

/// The record of one request a service received, kept by an inbound capture
/// adapter (a Hummingbird or Vapor middleware) while the framework runs the
/// handler: the adapter reports what it sees in plain values and this type
/// builds and sends the events, exactly once each.
///
/// Thread-safe: the request body is read on the handler's task, the response
/// body is written on the server's, and a client can go away at any time.
///
/// ```swift
/// guard let flow = InboundRecording(agent: agent, method: "GET", url: "http://svc/items", headers: [], peer: nil,
///                                   server: .hummingbird, sessionID: 1, taskID: 1) else { return try await next() }
/// let response = try await CaptureAgent.handling(flow.id) { try await next() }
/// flow.responded(statusCode: 200, headers: [])
/// flow.finished()
/// ```
package final class InboundRecording: Sendable {
    /// The viewer's control over this exchange (InboundRecording+Control.swift).
    struct Control {
        var control: ExchangeControl
        /// A map-local rule's answer, given instead of running the handler.
        var localAnswer: ExchangeResponse?
    }

    /// The inbound flow's id: what the handler's outbound flows name as
    /// their `parentID`.
    package var id: FlowID { flow.id }
    let agent: CaptureAgent
    let flow: FlowRecording
    /// Nil unless the app allows control and the viewer had rules or
    /// breakpoints as the request arrived.
    let control: Locked<Control>?

    /// Starts recording a received request and sends `flowStarted`; nil when
    /// the agent is not capturing or the request is excluded. `url` is the
    /// URL as the client addressed it (scheme, `Host` or `:authority`, path
    /// and query); `peer`, the client's address; `sessionID` and `taskID`
    /// number the flow within its server.
    package init?(
        agent: CaptureAgent,
        method: String,
        url: String,
        headers: [HTTPHeader],
        peer: String?,
        server: CaptureSource.Client,
        sessionID: Int,
        taskID: Int
    ) {
        let configuration = agent.configuration
        let host = URLAuthority(url: url).host
        guard agent.isCapturing, configuration.shouldCapture(host: host, url: url) else { return nil }
        self.agent = agent
        let started = Self.startControl(of: agent, method: method, url: url, headers: headers)
        control = started.map { Locked(Control(control: $0.control, localAnswer: $0.answer)) }
        // A controlled exchange is built even with no inspector: its control needs the log.
        flow = FlowRecording(agent: agent, building: started != nil) { id in
            var flow = FlowRecorder(id: id, method: method, url: url, headers: headers, sessionID: sessionID,
                                    taskID: taskID, configuration: configuration, clock: agent.clock)
            flow.source = CaptureSource(client: server, path: .inPlace)
            flow.responseBodyIsDecoded = false
            flow.direction = .inbound
            flow.peer = peer
            if let changes = started?.control.changes, let request = started?.control.request {
                flow.replaceRequest(method: request.method, url: request.url, headers: request.headers, body: nil)
                flow.setChanges(changes)
            }
            return flow
        }
    }

    /// Request body bytes as the handler reads them, counted in full and
    /// kept up to the capture limit.
    package func requestBody(_ bytes: UnsafeRawBufferPointer) {
        flow.requestBody(bytes)
    }

    /// The handler has read the whole request body (or there was none).
    package func requestEnded() {
        flow.requestEnded()
    }

    /// The handler returned (or threw) and the framework is about to write
    /// this response head; sends `flowResponse`.
    package func responded(statusCode: Int, headers: [HTTPHeader]) {
        flow.respond(endingRequest: true) { recorder in
            recorder.received(statusCode: statusCode, headers: headers, mimeType: mimeType(of: headers.first("Content-Type")))
        }
    }

    /// Response body bytes as they are written to the client.
    package func responseBody(_ bytes: UnsafeRawBufferPointer) {
        flow.responseBody(bytes)
    }

    /// The response went out whole (`error` nil), or writing it failed:
    /// the client went away, or the handler's body threw; `state` says
    /// otherwise (a kill). Sends `flowFinished` the first time only.
    package func finished(error: FlowError? = nil, state final: FlowState? = nil) {
        flow.finish { recorder, parts in
            recorder.finished(state: final ?? (error == nil ? .completed : .failed), error: error, requestBody: parts.requestBody)
        }
    }
}

extension FlowError {
    /// What an inbound flow ends with when its client closes the connection
    /// before the whole response was written.
    package static func clientWentAway(after bytes: Int, _ underlying: any Error) -> FlowError {
        FlowError(domain: "netinspect.inbound", code: 1,
                  message: "The client went away after \(bytes) bytes of the response (\(underlying))")
    }

    /// What an inbound flow ends with when the handler's response body
    /// threw while being written.
    package static func responseBodyFailed(after bytes: Int, _ underlying: any Error) -> FlowError {
        FlowError(domain: "netinspect.inbound", code: 2,
                  message: "Writing the response failed after \(bytes) bytes (\(underlying))")
    }
}
