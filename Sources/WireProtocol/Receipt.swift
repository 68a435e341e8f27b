import Foundation

/// What the inspector sends back on an agent's connection: how many of the
/// connection's events it has taken so far.
///
/// The wire is otherwise one-way (agent to inspector). Receipts let an
/// agent count exactly what a dying inspector never took: when the
/// connection breaks, the events it wrote on it minus the last receipt's
/// count were lost (see docs/PROTOCOL.md, "Receipts").
///
/// An event is one `flowStarted`, `flowResponse` or `flowFinished` message
/// (not `hello` or `status`). The inspector sends a receipt for 0 as soon
/// as it accepts the hello, which tells the agent that receipts will come,
/// then one whenever its count has grown.
///
/// Same framing as the other direction: a 4-byte big-endian length, then
/// `{"type":"receipt","events":N}`. Readers skip types they do not know.
public struct Receipt: Sendable, Equatable {
    /// Events of this connection taken by the inspector since the hello,
    /// cumulative.
    public var events: Int

    /// A receipt for `events` events.
    public init(events: Int) {
        self.events = events
    }

    /// The receipt as one frame.
    public func frame() -> Data {
        var writer = JSONWriter()
        writer.object { object in
            object.field("type", "receipt")
            object.field("events", events)
        }
        return writer.output.withBytes { FrameEncoder.frame(payload: Data($0)) }
    }
}

/// Turns the bytes an inspector sends back into receipts. Frames of other
/// types are skipped (a later protocol version may add some), rules among
/// them: an agent that does not accept control never decodes them.
public struct ReceiptDecoder: Sendable {
    private var messages: ViewerMessageDecoder

    /// Receipt frames are tiny; anything larger than `maximumFrameSize` is
    /// not from an inspector.
    public init(maximumFrameSize: Int = 64 * 1024) {
        messages = ViewerMessageDecoder(maximumFrameSize: maximumFrameSize, acceptsRules: false)
    }

    /// Adds received bytes.
    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        messages.append(contentsOf: bytes)
    }

    /// The next complete receipt, nil when more bytes are needed. Throws on
    /// a malformed frame or a receipt whose count is not a non-negative integer.
    public mutating func next() throws(WireError) -> Receipt? {
        while let message = try messages.next() {
            if case .receipt(let receipt) = message { return receipt }
        }
        return nil
    }
}

/// What a viewer sends an agent.
public enum ViewerMessage: Sendable, Equatable {
    /// How many of the connection's events the viewer has taken.
    case receipt(Receipt)
    /// The traffic rules to apply while this viewer stays connected; each
    /// one replaces the last, and an empty list removes them all.
    case rules([TrafficRule])
    /// Send this flow's request again, as the app first sent it (the agent
    /// keeps recent requests unredacted for this), as a new flow.
    case replay(FlowID)
    /// Send this request instead of the flow's, as a new flow: what a
    /// person made of the flow's request in an editor. Redacted header
    /// values and a body still marked truncated are the original's.
    /// On the wire this is a `replay` with a `request`.
    case editedReplay(FlowID, Request)
    /// Send this request, which a person wrote in the viewer, through the
    /// client that sent the `through` flow, as a new flow marked composed
    /// (``FlowChanges/composed``), no replay of that flow. Redacted values
    /// and a truncated body are treated as an edited replay treats them.
    /// On the wire this is a `replay` with a `request` and `"composed":true`,
    /// so an agent that predates it sends an edited replay instead.
    case compose(through: FlowID, Request)
    /// Hold the app's flows that match this filter (the inspector's filter
    /// language) at a breakpoint, before the request goes out and again
    /// before the app sees the response; nil or empty holds nothing. Like
    /// rules, it lasts while this viewer stays connected.
    case intercept(String?)
    /// Let a held flow go on, perhaps edited.
    case resume(FlowResume)
    /// End a held flow: the app gets a cancellation error.
    case kill(FlowID)
    /// The viewer reads this protocol version (2: bodies as raw bytes,
    /// ``FrameEncoder/encode(_:version:appendingTo:)``); sent once, before
    /// the first receipt, to an agent whose hello offered it.
    /// On the wire: `{"type":"protocol","version":2}`.
    case useProtocolVersion(Int)
    /// Answer matching requests from these recorded responses, before the
    /// network, while this viewer stays connected; nil stops. A book sent
    /// in parts takes effect with its last part.
    case serverReplay(ServerReplayBook?)

    /// The message as one frame.
    ///
    /// ```swift
    /// let frame = ViewerMessage.rules([try TrafficRule(.mapRemote, spec: "|a.example|b.example")]).frame()
    /// ```
    public func frame() -> Data {
        switch self {
        case .receipt(let receipt):
            return receipt.frame()
        case .rules(let rules):
            var writer = JSONWriter()
            writer.object { object in
                object.field("type", "rules")
                object.field("rules", rules)
            }
            return writer.output.withBytes { FrameEncoder.frame(payload: Data($0)) }
        case .replay(let id):
            return Self.frame { object in
                object.field("type", "replay")
                object.field("id", id)
            }
        case .editedReplay(let id, let request):
            return Self.frame { object in
                object.field("type", "replay")
                object.field("id", id)
                object.field("request", request)
            }
        case .compose(let id, let request):
            return Self.frame { object in
                object.field("type", "replay")
                object.field("id", id)
                object.field("request", request)
                object.field("composed", true)
            }
        case .intercept(let filter):
            return Self.frame { object in
                object.field("type", "intercept")
                object.field("filter", filter ?? "")
            }
        case .resume(let resume):
            return Self.frame { object in
                object.field("type", "resume")
                object.field("id", resume.id)
                object.field("request", resume.request)
                object.field("response", resume.response)
            }
        case .kill(let id):
            return Self.frame { object in
                object.field("type", "kill")
                object.field("id", id)
            }
        case .useProtocolVersion(let version):
            return Self.frame { object in
                object.field("type", "protocol")
                object.field("version", version)
            }
        case .serverReplay(let book):
            return Self.frame { object in
                object.field("type", "serverReplay")
                if let book { object.field("book", book) } else { object.field("stop", true) }
            }
        }
    }

    private static func frame(_ fields: (inout JSONWriter) -> Void) -> Data {
        var writer = JSONWriter()
        writer.object { object in fields(&object) }
        return writer.output.withBytes { FrameEncoder.frame(payload: Data($0)) }
    }
}

/// Turns the bytes a viewer sends into messages: receipts, and, for an agent
/// that accepts control, rules and replays. Frames of unknown types are skipped.
public struct ViewerMessageDecoder: Sendable {
    private var frames: FrameDecoder
    private let acceptsRules: Bool

    /// The most rules one message may carry.
    public static let maximumRules = 256

    /// `maximumFrameSize` bounds every frame, so a hostile viewer costs at
    /// most that much memory; rules with local files need more than receipts.
    public init(maximumFrameSize: Int, acceptsRules: Bool) {
        frames = FrameDecoder(maximumFrameSize: maximumFrameSize)
        self.acceptsRules = acceptsRules
    }

    /// Adds received bytes.
    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        frames.append(contentsOf: bytes)
    }

    /// The next complete message, nil when more bytes are needed.
    /// - Throws: ``WireError`` for a malformed frame or message.
    public mutating func next() throws(WireError) -> ViewerMessage? {
        while let payload = try frames.nextFrame() {
            let tape = JSONTape()
            let decoded = try payload.withUnsafeBufferPointer { buffer throws(WireError) -> ViewerMessage? in
                try tape.load(buffer, json: 0 ..< buffer.count)
                return try tape.read { json throws(WireError) in try message(in: json) }
            }
            if let decoded { return decoded }
        }
        return nil
    }

    /// The message in one frame; nil for a kind this side skips.
    private func message(in json: JSONReader) throws(WireError) -> ViewerMessage? {
        guard json.isObject, let kind = try? json.string("type") else {
            throw WireError.malformedPayload("an inspector frame must be an object with a string \"type\"")
        }
        switch kind {
        case "receipt":
            guard let events = try? json.int("events"), events >= 0 else {
                throw WireError.malformedPayload("receipt.events must be a non-negative integer")
            }
            return .receipt(Receipt(events: events))
        case "protocol":
            guard let version = try? json.int("version") else {
                throw WireError.malformedPayload("protocol.version must be an integer")
            }
            return .useProtocolVersion(version)
        case "rules" where acceptsRules:
            let rules: [TrafficRule] = try fields { () throws(JSONFieldError) in try json.array("rules") }
            guard rules.count <= Self.maximumRules else {
                throw WireError.malformedPayload("rules: \(rules.count) rules, at most \(Self.maximumRules)")
            }
            return .rules(rules)
        case "replay" where acceptsRules:
            let id = try Self.flowID(in: json, of: kind)
            guard let request: Request = try fields({ () throws(JSONFieldError) in try json.decodeIfPresent("request") }) else {
                return .replay(id)
            }
            let composed = try fields { () throws(JSONFieldError) in try json.optionalBool("composed") }
            return composed == true ? .compose(through: id, request) : .editedReplay(id, request)
        case "intercept" where acceptsRules:
            guard let filter = try? json.string("filter") else {
                throw WireError.malformedPayload("intercept.filter must be a string (empty: hold nothing)")
            }
            return .intercept(filter.isEmpty ? nil : filter)
        case "resume" where acceptsRules:
            let id = try Self.flowID(in: json, of: kind)
            return .resume(try fields { () throws(JSONFieldError) in
                FlowResume(id: id, request: try json.decodeIfPresent("request"), response: try json.decodeIfPresent("response"))
            })
        case "kill" where acceptsRules:
            return .kill(try Self.flowID(in: json, of: kind))
        case "serverReplay" where acceptsRules:
            return .serverReplay(try fields { () throws(JSONFieldError) in try json.decodeIfPresent("book") })
        default:
            return nil
        }
    }

    /// Reads model fields; a misfit is a malformed payload naming its path.
    private func fields<T>(_ body: () throws(JSONFieldError) -> T) throws(WireError) -> T {
        do {
            return try body()
        } catch {
            throw error.wireError
        }
    }

    private static func flowID(in json: JSONReader, of kind: String) throws(WireError) -> FlowID {
        guard let text = try? json.string("id"), let id = FlowID(text) else {
            throw WireError.malformedPayload("\(kind).id must be a flow id (a UUID string)")
        }
        return id
    }
}

extension Message {
    /// A flow event (`flowStarted`, `flowResponse`, `flowFinished`,
    /// `grpcMessage`, `bodyPart`, `webSocketMessage`): what agents count, drop, and get receipts for.
    public var isFlowEvent: Bool {
        switch self {
        case .flowStarted, .flowResponse, .flowFinished, .grpcMessage, .bodyPart, .webSocketMessage: true
        case .hello, .status, .held, .released: false
        }
    }
}
