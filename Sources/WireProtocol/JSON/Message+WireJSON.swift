import Foundation

// The model's one JSON codec, hand-written: the wire, `--json`, `--save`
// and HAR's `_netinspect` all go through it. Synthesized Codable cost 172 k
// instructions to decode a message and 149 k to encode one, this 41 k and
// 17 k (docs/BENCHMARKS.md section 2), so the model has no other.
// Member names and optionality are docs/PROTOCOL.md's; GoldenWireFormatTests
// pin them.

extension HTTPHeader: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("name", name); $0.field("value", value) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(name: try json.string("name"), value: try json.string("value"))
    }
}

extension CapturedBody: JSONWritable, JSONReadable {
    /// Version 1 carries the bytes as base64; version 2 numbers a section
    /// of raw bytes after the JSON (``SectionedPayload``).
    func write(to writer: inout JSONWriter) {
        writer.object {
            if $0.sections != nil {
                $0.field("section", $0.section(data))
            } else {
                $0.field("base64", base64: data)
            }
            $0.field("size", size); $0.field("truncated", isTruncated)
            if isDecoded { $0.field("decoded", true) }
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        let data: Data
        if let section = try json.member("section") {
            data = try within("section") { () throws(JSONFieldError) in try section.section }
        } else {
            let encoded = try json.required("base64")
            guard let decoded = Data(base64Encoded: try encoded.string) else { throw encoded.mismatch("base64") }
            data = decoded
        }
        self.init(data: data, size: try json.int("size"), isTruncated: try json.bool("truncated"),
                  isDecoded: try json.optionalBool("decoded") ?? false)
    }
}

extension Request: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("method", method); $0.field("url", url); $0.field("headers", headers); $0.field("body", body)
            if !clientHeaders.isEmpty { $0.field("clientHeaders", clientHeaders) }
        }
    }
    @inline(__always)
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(method: try json.string("method"), url: try json.string("url"),
                  headers: try json.array("headers"), body: try json.decodeIfPresent("body"),
                  clientHeaders: try json.optionalArray("clientHeaders") ?? [])
    }
}

extension Response: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("statusCode", statusCode); $0.field("headers", headers); $0.field("body", body); $0.field("mimeType", mimeType)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(statusCode: try json.int("statusCode"), headers: try json.array("headers"),
                  body: try json.decodeIfPresent("body"), mimeType: try json.optionalString("mimeType"))
    }
}

extension RedirectHop: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("statusCode", statusCode); $0.field("from", from); $0.field("to", to) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(statusCode: try json.int("statusCode"), from: try json.string("from"), to: try json.string("to"))
    }
}

extension FlowError: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("domain", domain); $0.field("code", code); $0.field("message", message) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(domain: try json.string("domain"), code: try json.int("code"), message: try json.string("message"))
    }
}

extension Timing: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("startedAt", startedAt.timeIntervalSince1970)
            $0.field("requestSent", requestSent)
            $0.field("firstResponseByte", firstResponseByte)
            $0.field("finished", finished)
            $0.field("phases", phases)
        }
    }
    @inline(__always)
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(startedAt: Date(timeIntervalSince1970: try json.double("startedAt")),
                  requestSent: try json.optionalDouble("requestSent"),
                  firstResponseByte: try json.optionalDouble("firstResponseByte"),
                  finished: try json.optionalDouble("finished"),
                  phases: try json.decodeIfPresent("phases"))
    }
}

extension TransferPhases: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("blocked", blocked); $0.field("dns", dns); $0.field("connect", connect); $0.field("tls", tls)
            $0.field("send", send); $0.field("wait", wait); $0.field("receive", receive); $0.field("source", source)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(blocked: try json.optionalDouble("blocked"), dns: try json.optionalDouble("dns"),
                  connect: try json.optionalDouble("connect"), tls: try json.optionalDouble("tls"),
                  send: try json.optionalDouble("send"), wait: try json.optionalDouble("wait"),
                  receive: try json.optionalDouble("receive"), source: try json.optionalString("source"))
    }
}

/// A bare string as an array element.
struct JSONString: JSONWritable, JSONReadable {
    var text: String
    init(_ text: String) { self.text = text }
    func write(to writer: inout JSONWriter) { writer.string(text) }
    init(json: JSONReader) throws(JSONFieldError) { text = try json.string }
}

extension CaptureSource: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("client", client.rawValue); $0.field("path", path?.rawValue); $0.field("operationID", operationID)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(client: Client(rawValue: try json.string("client")),
                  path: try json.optionalString("path").map(Path.init(rawValue:)),
                  operationID: try json.optionalString("operationID"))
    }
}

extension FlowID: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) { writer.uuid(uuid) }
    init(json: JSONReader) throws(JSONFieldError) {
        guard let uuid = try json.withStringBytes(parseUUID) else { throw json.mismatch("a UUID string") }
        self.init(uuid)
    }
}

/// A closed set of names on the wire (a flow's state, its direction): written
/// as its raw value; any other name is refused with the set's `wireName`.
protocol WireNameSet: CaseIterable, RawRepresentable, Sendable, JSONWritable, JSONReadable where RawValue == String {
    static var wireName: String { get }
    /// The set's names as bytes, matched without making a String.
    static var wireNames: WireNames<Self> { get }
}

extension WireNameSet {
    func write(to writer: inout JSONWriter) { writer.string(rawValue) }
    init(json: JSONReader) throws(JSONFieldError) {
        guard let value = try json.withStringBytes({ Self.wireNames.value(named: $0) }) else {
            throw JSONFieldError(problem: .invalid("unknown \(Self.wireName) '\(try json.string)'"))
        }
        self = value
    }
}

extension FlowDirection: WireNameSet {
    static let wireName = "direction"
    static let wireNames = WireNames<Self>()
}

extension FlowState: WireNameSet {
    static let wireName = "state"
    static let wireNames = WireNames<Self>()
}

extension NetworkLog: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { writeMembers(to: &$0) }
    }

    /// The members alone, so `--json` can add the app's after them.
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id); writer.field("sessionID", sessionID); writer.field("taskID", taskID)
        writer.field("request", request); writer.field("response", response); writer.field("timing", timing)
        writer.field("redirects", redirects); writer.field("error", error); writer.field("state", state)
        writer.field("source", source); writer.field("changes", changes)
        writer.field("direction", direction); writer.field("parentID", parentID); writer.field("peer", peer)
        writer.field("localAddress", localAddress); writer.field("grpc", grpc)
        writer.field("parts", parts); writer.field("webSocket", webSocket)
    }
    @inline(__always)
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(id: try json.decode("id"), sessionID: try json.int("sessionID"), taskID: try json.int("taskID"),
                  request: try json.decode("request"), response: try json.decodeIfPresent("response"),
                  timing: try json.decode("timing"), redirects: try json.array("redirects"),
                  error: try json.decodeIfPresent("error"), state: try json.decode("state"),
                  source: try json.decodeIfPresent("source"), changes: try json.decodeIfPresent("changes"),
                  direction: try json.decodeIfPresent("direction"),
                  parentID: try json.decodeIfPresent("parentID"), peer: try json.optionalString("peer"),
                  localAddress: try json.optionalString("localAddress"), grpc: try json.decodeIfPresent("grpc"),
                  parts: try json.decodeIfPresent("parts"), webSocket: try json.decodeIfPresent("webSocket"))
    }
}

extension Message {
    /// The JSON payload of this message, by the wire path's fast writer.
    func wireJSON() -> [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the JSON payload of this message after what `writer` holds.
    func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.field("type", kind)
            switch self {
            case .hello(let hello):
                writer.field("protocolVersion", hello.protocolVersion); writer.field("agentName", hello.agentName)
                writer.field("agentVersion", hello.agentVersion); writer.field("appName", hello.appName)
                writer.field("processID", hello.processID); writer.field("hostName", hello.hostName)
                writer.field("token", hello.token)
                if hello.acceptsControl { writer.field("acceptsControl", true) }
                if let highest = hello.highestProtocolVersion { writer.field("highestProtocolVersion", highest) }
            case .flowStarted(let flow):
                writer.field("flow", flow)
            case .flowResponse(let event):
                writer.field("id", event.id); writer.field("response", event.response)
                writer.field("timing", event.timing); writer.field("redirects", event.redirects)
            case .flowFinished(let event):
                writer.field("id", event.id); writer.field("state", event.state); writer.field("response", event.response)
                writer.field("requestBody", event.requestBody); writer.field("error", event.error)
                writer.field("timing", event.timing); writer.field("redirects", event.redirects)
                if let clientHeaders = event.clientHeaders { writer.field("clientHeaders", clientHeaders) }
                writer.field("changes", event.changes); writer.field("grpc", event.grpc)
                writer.field("localAddress", event.localAddress); writer.field("webSocket", event.webSocket)
            case .status(let status):
                writer.field("droppedEvents", status.droppedEvents); writer.field("queuedEvents", status.queuedEvents)
            case .held(let hold):
                writer.field("id", hold.id); writer.field("phase", hold.phase); writer.field("response", hold.response)
                writer.field("timeout", hold.timeout)
            case .released(let release):
                writer.field("id", release.id); writer.field("phase", release.phase); writer.field("reason", release.reason)
            case .grpcMessage(let event):
                writer.field("id", event.id); writer.field("message", event.message)
            case .bodyPart(let event):
                writer.field("id", event.id); writer.field("part", event.part)
            case .webSocketMessage(let event):
                writer.field("id", event.id); writer.field("message", event.message)
            }
        }
    }

    /// Decodes a payload by the wire path's fast reader; `nil` for an
    /// unknown kind.
    static func fromWireJSON(_ bytes: UnsafeBufferPointer<UInt8>, tape: JSONTape) throws(WireError) -> Message? {
        try tape.load(payload: bytes)
        do {
            return try tape.read { json throws(JSONFieldError) in try fromWireJSON(json) }
        } catch {
            throw error.wireError
        }
    }

    private static func fromWireJSON(_ json: JSONReader) throws(JSONFieldError) -> Message? {
        let kind = try within("type") { () throws(JSONFieldError) in
            try json.required("type").withStringBytes { Kind.wireNames.value(named: $0) }
        }
        switch kind {
        case .hello:
            return .hello(Hello(
                protocolVersion: try json.int("protocolVersion"), agentName: try json.string("agentName"),
                agentVersion: try json.string("agentVersion"), appName: try json.string("appName"),
                processID: try json.int("processID"), hostName: try json.string("hostName"),
                token: try json.optionalString("token"),
                acceptsControl: try json.optionalBool("acceptsControl") ?? false,
                highestProtocolVersion: try json.optionalInt("highestProtocolVersion")))
        case .flowStarted:
            return .flowStarted(try json.decode("flow"))
        case .flowResponse:
            return .flowResponse(FlowResponse(
                id: try json.decode("id"), response: try json.decode("response"),
                timing: try json.decode("timing"), redirects: try json.array("redirects")))
        case .flowFinished:
            return .flowFinished(FlowFinished(
                id: try json.decode("id"), state: try json.decode("state"), response: try json.decodeIfPresent("response"),
                requestBody: try json.decodeIfPresent("requestBody"), error: try json.decodeIfPresent("error"),
                timing: try json.decode("timing"), redirects: try json.array("redirects"),
                clientHeaders: try json.optionalArray("clientHeaders"), changes: try json.decodeIfPresent("changes"),
                grpc: try json.decodeIfPresent("grpc"), localAddress: try json.optionalString("localAddress"),
                webSocket: try json.decodeIfPresent("webSocket")))
        case .status:
            return .status(AgentStatus(droppedEvents: try json.int("droppedEvents"), queuedEvents: try json.int("queuedEvents")))
        case .held:
            return .held(FlowHold(id: try json.decode("id"), phase: try json.decode("phase"),
                                  response: try json.decodeIfPresent("response"), timeout: try json.double("timeout")))
        case .released:
            return .released(FlowRelease(id: try json.decode("id"), phase: try json.decode("phase"), reason: try json.decode("reason")))
        case .grpcMessage:
            return .grpcMessage(GRPCMessageEvent(id: try json.decode("id"), message: try json.decode("message")))
        case .bodyPart:
            return .bodyPart(BodyPartEvent(id: try json.decode("id"), part: try json.decode("part")))
        case .webSocketMessage:
            return .webSocketMessage(WebSocketMessageEvent(id: try json.decode("id"), message: try json.decode("message")))
        case nil:
            return nil
        }
    }
}

extension NetworkLog {
    /// The flow as one line of JSON: the same object as the `flow` member of
    /// a `flowStarted` message (docs/PROTOCOL.md §4), without a newline.
    /// `netinspect --json` and `--save` write these.
    public func jsonLine() -> Data {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.output.withBytes { Data($0) }
    }

    /// The same line with, last, the app the flow came from as its agent's
    /// hello names it: `"app":{"name":…,"pid":…,"host":…}` (for spans
    /// received over OTLP, the service). What `netinspect --json` prints;
    /// ``init(jsonLine:)`` reads the flow and skips it.
    ///
    /// ```swift
    /// log.jsonLine(app: hello)   // {"id":"…",…,"app":{"name":"checkout","pid":4242,"host":"build-7"}}
    /// ```
    public func jsonLine(app hello: Hello?) -> Data {
        guard let hello else { return jsonLine() }
        var writer = JSONWriter()
        writer.object {
            writeMembers(to: &$0)
            $0.key("app")
            $0.object {
                $0.field("name", hello.appName); $0.field("pid", hello.processID); $0.field("host", hello.hostName)
            }
        }
        return writer.output.withBytes { Data($0) }
    }

    /// Reads a flow written by ``jsonLine()``.
    /// - Throws: ``WireError/malformedPayload(_:)`` naming what is wrong.
    public init(jsonLine bytes: some Collection<UInt8>) throws(WireError) {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(WireError) -> NetworkLog in try NetworkLog(parsing: buffer) }
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(WireError) -> NetworkLog in try NetworkLog(parsing: buffer) }
        }
        self = try result.get()
    }

    private init(parsing buffer: UnsafeBufferPointer<UInt8>) throws(WireError) {
        let tape = JSONTape()
        try tape.load(buffer, json: 0 ..< buffer.count)
        do {
            self = try tape.read { json throws(JSONFieldError) in try NetworkLog(json: json) }
        } catch {
            throw error.wireError
        }
    }
}

extension Message.Kind {
    /// The `type` names, matched where they lie in the payload.
    static let wireNames = WireNames<Self>()
}
