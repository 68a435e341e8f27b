import Foundation

/// Where a breakpoint holds a flow: before its request goes out, or before
/// the app sees its response.
public enum HoldPhase: String, Sendable, Equatable, CaseIterable {
    /// The request has not been sent.
    case request
    /// The whole response has arrived; the app has not seen it.
    case response
}

/// An agent holds a flow at a breakpoint (message `held`, agent to viewer).
///
/// The agent has already sent the flow's `flowStarted` (and, for the
/// response phase, its `flowResponse`). A held response carries its body
/// here, since `flowFinished` only follows once the hold ends. The flow
/// stays held until the viewer resumes or kills it, the viewer goes away,
/// the app cancels the task, or ``timeout`` passes; then a ``FlowRelease``
/// follows.
///
/// ```swift
/// let hold = FlowHold(id: flow.id, phase: .request, timeout: 60)
/// let frame = try FrameEncoder().encode(.held(hold))
/// ```
public struct FlowHold: Sendable, Equatable {
    /// The flow held.
    public var id: FlowID
    /// Before the request is sent, or before the app sees the response.
    public var phase: HoldPhase
    /// The response phase only: the response as it arrived, with its body
    /// (redacted and capped like any logged response).
    public var response: Response?
    /// Seconds after which the agent resumes the flow unmodified.
    public var timeout: Double

    /// Creates the event.
    public init(id: FlowID, phase: HoldPhase, response: Response? = nil, timeout: Double) {
        self.id = id
        self.phase = phase
        self.response = response
        self.timeout = timeout
    }
}

/// A held flow goes on (message `released`, agent to viewer).
public struct FlowRelease: Sendable, Equatable {
    /// Why the hold ended.
    public enum Reason: String, Sendable, Equatable {
        /// The viewer resumed it (perhaps edited).
        case resumed
        /// The viewer killed it: the app got a cancellation error.
        case killed
        /// Nobody answered within the hold's timeout: it went on unmodified.
        case timeout
        /// The app cancelled the task while it was held.
        case cancelled
        /// The viewer that held it went away: it went on unmodified.
        case viewerGone = "viewer-gone"
    }

    /// The flow released.
    public var id: FlowID
    /// The phase it was held in.
    public var phase: HoldPhase
    /// Why.
    public var reason: Reason

    /// Creates the event.
    public init(id: FlowID, phase: HoldPhase, reason: Reason) {
        self.id = id
        self.phase = phase
        self.reason = reason
    }
}

/// What a viewer answers a held flow with (message `resume`, viewer to agent).
///
/// Without ``request`` or ``response`` the flow goes on as it was. With one,
/// the agent sends that request, or gives the app that response, instead.
/// A header whose value is the agent's redaction marker keeps the original
/// value (the viewer never saw it), and a body still marked truncated keeps
/// the original body (the viewer only saw its start).
///
/// ```swift
/// var request = heldFlow.request
/// request.headers.append(HTTPHeader(name: "X-Debug", value: "1"))
/// let message = ViewerMessage.resume(FlowResume(id: heldFlow.id, request: request))
/// ```
public struct FlowResume: Sendable, Equatable {
    /// The held flow.
    public var id: FlowID
    /// The request to send instead (request phase).
    public var request: Request?
    /// The response to give the app instead (response phase).
    public var response: Response?

    /// Creates the answer.
    public init(id: FlowID, request: Request? = nil, response: Response? = nil) {
        self.id = id
        self.request = request
        self.response = response
    }
}

extension HoldPhase: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) { writer.string(rawValue) }
    init(json: JSONReader) throws(JSONFieldError) {
        let text = try json.string
        guard let phase = HoldPhase(rawValue: text) else { throw JSONFieldError(problem: .invalid("unknown phase '\(text)'")) }
        self = phase
    }
}

extension FlowRelease.Reason: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) { writer.string(rawValue) }
    init(json: JSONReader) throws(JSONFieldError) {
        let text = try json.string
        guard let reason = FlowRelease.Reason(rawValue: text) else { throw JSONFieldError(problem: .invalid("unknown reason '\(text)'")) }
        self = reason
    }
}
