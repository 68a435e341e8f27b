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
    /// The inbound flow's id: what the handler's outbound flows name as
    /// their `parentID`.
    package var id: FlowID { flow.id }
    let agent: CaptureAgent
    var flow: FlowRecording { controlled.recording }
    /// The flow under the viewer's control (InboundRecording+Control.swift):
    /// not controlled unless the app allows control and the viewer had
    /// rules or breakpoints as the request arrived.
    let controlled: ControlledFlow
    /// A map-local rule's answer, given instead of running the handler.
    let localAnswer: ExchangeResponse?

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
        let host = URLAuthority(url: url).host
        guard agent.isCapturing, agent.configuration.shouldCapture(host: host, url: url) else { return nil }
        self.agent = agent
        var start = FlowStart(method: method, url: url, headers: headers, sessionID: sessionID, taskID: taskID)
        start.source = CaptureSource(client: server, path: .inPlace)
        start.direction = .inbound
        start.peer = peer
        (controlled, localAnswer) = Self.start(start, agent: agent)
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
            recorder.received(statusCode: statusCode, headers: headers, mimeType: MediaType.essence(of: headers.first("Content-Type")))
        }
    }

    /// Response body bytes as they are written to the client.
    package func responseBody(_ bytes: UnsafeRawBufferPointer) {
        flow.responseBody(bytes)
    }

    /// The response went out whole (`error` nil), or writing it failed:
    /// the client went away, or the handler's body threw; `state` says
    /// otherwise (a kill). Sends `flowFinished` the first time only.
    package func finished(error: FlowError? = nil) {
        flow.finish(error.map(FlowEnd.failed) ?? .completed)
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
