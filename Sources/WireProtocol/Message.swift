import Foundation

/// One message of the wire protocol.
///
/// Every connection starts with a ``hello(_:)``; flow events and status
/// messages follow in any number. On the wire a message is a flat JSON object
/// whose `type` names the kind; see `docs/PROTOCOL.md` for each kind's fields.
public enum Message: Sendable, Equatable {
    /// Who is on the other end; always the first message of a connection.
    case hello(Hello)
    /// A request has started: the flow, in state ``FlowState/pending``.
    /// (Not `indirect`: a box per event, freed once the store has the flow,
    /// left holes between flows' strings, and netinspect's filters walked
    /// them slower (docs/BENCHMARKS.md, "Costs behind the code"). A flow is kept small to be
    /// moved instead: its rare parts are ``Boxed``.)
    case flowStarted(NetworkLog)
    /// The response head of a flow has arrived.
    case flowResponse(FlowResponse)
    /// A flow completed, failed or was cancelled.
    case flowFinished(FlowFinished)
    /// The agent's own health: events it had to drop so far.
    case status(AgentStatus)
    /// A breakpoint holds a flow (only after the viewer asked for breakpoints).
    case held(FlowHold)
    /// A held flow goes on.
    case released(FlowRelease)
    /// A message of a gRPC call went by.
    case grpcMessage(GRPCMessageEvent)
    /// Bytes of a flow's body went by (version-2 connections only).
    case bodyPart(BodyPartEvent)
    /// A message of a WebSocket connection went by.
    case webSocketMessage(WebSocketMessageEvent)

    /// The `type` string of this kind on the wire.
    public var kind: String {
        switch self {
        case .hello: Kind.hello.rawValue
        case .flowStarted: Kind.flowStarted.rawValue
        case .flowResponse: Kind.flowResponse.rawValue
        case .flowFinished: Kind.flowFinished.rawValue
        case .status: Kind.status.rawValue
        case .held: Kind.held.rawValue
        case .released: Kind.released.rawValue
        case .grpcMessage: Kind.grpcMessage.rawValue
        case .bodyPart: Kind.bodyPart.rawValue
        case .webSocketMessage: Kind.webSocketMessage.rawValue
        }
    }

    /// The message kinds this library knows.
    public enum Kind: String, Sendable, CaseIterable {
        case hello, flowStarted, flowResponse, flowFinished, status, held, released, grpcMessage, bodyPart, webSocketMessage
    }
}

/// The first message on every connection.
public struct Hello: Sendable, Equatable {
    /// The protocol version the sender speaks (``Wire/protocolVersion``).
    public var protocolVersion: Int
    /// The sending library, e.g. `CaptureAgent`.
    public var agentName: String
    /// The sending library's version.
    public var agentVersion: String
    /// The host application's name (its process name unless configured).
    public var appName: String
    /// The host application's process id.
    public var processID: Int
    /// The machine the host application runs on.
    public var hostName: String
    /// A shared secret, required by listeners on non-loopback TCP addresses.
    public var token: String?
    /// Whether the app allows a viewer to change its traffic (rules); an
    /// agent that does not never applies any. Absent on the wire means false.
    public var acceptsControl: Bool
    /// The highest protocol version the sender can switch to when the
    /// viewer asks (``ViewerMessage/useProtocolVersion(_:)``); nil (absent)
    /// means ``protocolVersion`` only. The hello itself and the frames
    /// before the switch are ``protocolVersion``'s.
    public var highestProtocolVersion: Int?

    /// Creates a hello.
    public init(
        protocolVersion: Int = Wire.protocolVersion,
        agentName: String,
        agentVersion: String,
        appName: String,
        processID: Int,
        hostName: String,
        token: String? = nil,
        acceptsControl: Bool = false,
        highestProtocolVersion: Int? = nil
    ) {
        self.protocolVersion = protocolVersion
        self.agentName = agentName
        self.agentVersion = agentVersion
        self.appName = appName
        self.processID = processID
        self.hostName = hostName
        self.token = token
        self.acceptsControl = acceptsControl
        self.highestProtocolVersion = highestProtocolVersion
    }
}

/// The response head of a flow has arrived.
public struct FlowResponse: Sendable, Equatable {
    /// The flow this event belongs to.
    public var id: FlowID
    /// Status, headers and MIME type; the body comes with ``FlowFinished``.
    public var response: Response
    /// Timing so far (first response byte set).
    public var timing: Timing
    /// Redirects followed before this response.
    public var redirects: [RedirectHop]

    /// Creates the event.
    public init(id: FlowID, response: Response, timing: Timing, redirects: [RedirectHop] = []) {
        self.id = id
        self.response = response
        self.timing = timing
        self.redirects = redirects
    }
}

/// A flow has ended.
public struct FlowFinished: Sendable, Equatable {
    /// The flow this event belongs to.
    public var id: FlowID
    /// ``FlowState/completed``, ``FlowState/failed`` or ``FlowState/cancelled``.
    public var state: FlowState
    /// The final response with its body, when one was received.
    public var response: Response?
    /// The request body, when it was only known once sent (streams, files).
    public var requestBody: CapturedBody?
    /// Why the flow failed or was cancelled.
    @Boxed public var error: FlowError?
    /// The complete timing.
    public var timing: Timing
    /// Every redirect followed.
    public var redirects: [RedirectHop]
    /// The header fields the client added (``Request/clientHeaders``), when
    /// they were only known once the request had gone out; they replace the
    /// started flow's list.
    public var clientHeaders: [HTTPHeader]?
    /// What changed the flow, when that was only known at its end (a
    /// response edited at a breakpoint); replaces the started flow's record.
    @Boxed public var changes: FlowChanges?
    /// How the flow's gRPC call ended: status, trailers, messages not kept.
    @Boxed public var grpc: GRPCOutcome?
    /// How the flow's WebSocket connection ended: messages not kept.
    @Boxed public var webSocket: WebSocketOutcome?
    /// The flow's ``NetworkLog/localAddress``, when it was only known once
    /// the request had gone out (URLSession connects after the flow starts).
    public var localAddress: String?

    /// Creates the event.
    public init(
        id: FlowID,
        state: FlowState,
        response: Response? = nil,
        requestBody: CapturedBody? = nil,
        error: FlowError? = nil,
        timing: Timing,
        redirects: [RedirectHop] = [],
        clientHeaders: [HTTPHeader]? = nil,
        changes: FlowChanges? = nil,
        grpc: GRPCOutcome? = nil,
        localAddress: String? = nil,
        webSocket: WebSocketOutcome? = nil
    ) {
        self.id = id
        self.state = state
        self.response = response
        self.requestBody = requestBody
        self.error = error
        self.timing = timing
        self.redirects = redirects
        self.clientHeaders = clientHeaders
        self.changes = changes
        self.grpc = grpc
        self.localAddress = localAddress
        self.webSocket = webSocket
    }
}

/// The agent's own health, sent after `hello` and whenever it changes.
public struct AgentStatus: Sendable, Equatable {
    /// Events the agent dropped since it started because its queue was full
    /// or no inspector was reachable. Cumulative, never reset.
    public var droppedEvents: Int
    /// Events waiting in the agent's queue when this was sent.
    public var queuedEvents: Int

    /// Creates a status message.
    public init(droppedEvents: Int, queuedEvents: Int = 0) {
        self.droppedEvents = droppedEvents
        self.queuedEvents = queuedEvents
    }
}

extension NetworkLog {
    /// Folds a response-head event into the flow. A flow already finished
    /// keeps its state (events may arrive late after a reconnect).
    public mutating func apply(_ event: FlowResponse) {
        response = event.response
        timing = event.timing
        redirects = event.redirects
        if !state.isFinal { state = .responded }
    }

    /// Folds a finish event into the flow.
    public mutating func apply(_ event: FlowFinished) {
        state = event.state
        if let finalResponse = event.response { response = finalResponse }
        if let body = event.requestBody { request.body = body }
        if let clientHeaders = event.clientHeaders { request.clientHeaders = clientHeaders }
        if let changes = event.changes { self.changes = changes }
        if let outcome = event.grpc { grpc?.apply(outcome) }
        if let outcome = event.webSocket { webSocket?.apply(outcome) }
        if let address = event.localAddress { localAddress = address }
        error = event.error
        timing = event.timing
        redirects = event.redirects
    }
}

// MARK: - Coding

extension Message {
    /// Decodes one frame payload.
    ///
    /// - Returns: the message, or `nil` when its kind is unknown (newer
    ///   agents may send kinds this viewer predates; they are skipped).
    /// - Throws: ``WireError/malformedPayload(_:)`` when the payload is not a
    ///   JSON object with a string `type`, or a known kind is malformed.
    public static func decode(payload: some Collection<UInt8>) throws(WireError) -> Message? {
        try decode(payload: payload, tape: JSONTape())
    }

    /// Decodes a payload of either version with `tape`, which a decoder
    /// keeps from frame to frame.
    static func decode(payload: some Collection<UInt8>, tape: JSONTape) throws(WireError) -> Message? {
        // The message is moved out, never wrapped in a Result: copying a
        // flow retains every string and array it holds.
        var message: Message?
        var failure: WireError?
        let read: Void? = payload.withContiguousStorageIfAvailable { buffer in
            do throws(WireError) { message = try fromWireJSON(buffer, tape: tape) } catch { failure = error }
        }
        if read == nil {
            [UInt8](payload).withUnsafeBufferPointer { buffer in
                do throws(WireError) { message = try fromWireJSON(buffer, tape: tape) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        return message.take()
    }

    /// The message's JSON payload, without the length prefix.
    public func payload() -> Data { Data(wireJSON()) }
}
