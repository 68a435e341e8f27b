// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import Foundation
import GRPCCore
import WireProtocol

/// The record of one gRPC call, client or server side, as one flow: the
/// transport wrappers report each part as it goes by, and this translates
/// grpc-swift's types for the call's ``FlowRecording``, which makes the
/// events (`flowStarted`, `flowResponse`, one `grpcMessage` per message,
/// `flowFinished` with the status) exactly once each and in order, or
/// counts them when the call is not built.
///
/// Thread-safe: a call's request parts are written on one task and its
/// response parts read on another, and either may end it.
struct GRPCCallRecording: Sendable {
    let flow: FlowRecording
    private let agent: CaptureAgent

    /// The flow's id: what a server handler's client calls name as their parent.
    var id: FlowID { flow.id }

    /// Starts recording a call whose request metadata is `metadata` and sends
    /// `flowStarted`; nil when the agent is not capturing or the call's URL
    /// is excluded. `peer` is the other end as the transport names it
    /// (`ipv4:127.0.0.1:50051`, `in-process:42`).
    init?(agent: CaptureAgent, descriptor: MethodDescriptor, metadata: Metadata, endpoint: GRPCEndpoint,
          direction: FlowDirection?, parentID: FlowID?, sessionID: Int, taskID: Int) {
        let url = endpoint.url(for: descriptor)
        guard agent.isCapturing, agent.configuration.shouldCapture(host: endpoint.host, url: url) else { return nil }
        self.agent = agent
        // Described only for a call that is built: an unbuilt one copies no metadata.
        flow = FlowRecording(agent: agent, start: Self.flowStart(descriptor: descriptor, metadata: metadata, url: url, endpoint: endpoint,
                                                                 direction: direction, parentID: parentID, sessionID: sessionID, taskID: taskID))
    }

    private static func flowStart(descriptor: MethodDescriptor, metadata: Metadata, url: String, endpoint: GRPCEndpoint,
                                  direction: FlowDirection?, parentID: FlowID?, sessionID: Int, taskID: Int) -> FlowStart {
        var start = FlowStart(method: "POST", url: url, headers: metadata.headers, sessionID: sessionID, taskID: taskID)
        start.source = CaptureSource(client: .grpcSwift, path: .inPlace)
        start.direction = direction
        start.parentID = parentID
        start.peer = endpoint.peer
        start.grpc = GRPCCall(service: descriptor.service.fullyQualifiedService, method: descriptor.method,
                              kind: descriptor.type.map(GRPCCallKind.init))
        return start
    }

    /// The flow as it stands, for a breakpoint's filter; nil when unbuilt.
    var log: NetworkLog? { flow.log }

    /// A message went by: its bytes are kept up to the body capture limit,
    /// and past the call's message limit only counted.
    func message(_ direction: GRPCMessage.Direction, _ bytes: some GRPCContiguousBytes) {
        let cap = agent.configuration.bodyCaptureLimit
        flow.message(limit: agent.configuration.messageLimit) { recorder in
            let body = bytes.withUnsafeBytes { raw in
                CapturedBody(data: Data(raw.prefix(cap)), size: raw.count, isTruncated: raw.count > cap)
            }
            return .grpcMessage(GRPCMessageEvent(id: recorder.id, message: GRPCMessage(direction: direction, at: recorder.elapsed, body: body)))
        }
    }

    /// The client has sent its last message (half-close).
    func requestEnded() {
        flow.requestEnded()
    }

    /// The server's initial metadata: the response head (HTTP/2 status 200).
    func responded(_ metadata: Metadata) {
        flow.respond { Self.head(&$0, headers: metadata.headers) }
    }

    private static func head(_ recorder: inout FlowRecorder, headers: [HTTPHeader]) -> Message {
        recorder.received(statusCode: 200, headers: headers, mimeType: "application/grpc")
    }

    /// The call ended with `status` and `trailers`, as the server sent them
    /// or, with no server status (a deadline, a cancellation, a broken
    /// connection), as the client library reports them. `error`: how the
    /// flow failed when the call did not end with a status of its own.
    func finished(_ status: Status, trailers: Metadata = [:], error: FlowError? = nil) {
        // A trailers-only answer is still an HTTP/2 response head.
        flow.finish(responding: error == nil ? { Self.head(&$0, headers: []) } : nil) { recorder, parts in
            let outcome = GRPCOutcome(status: GRPCStatus(status), trailers: agent.configuration.redacting(trailers.headers),
                                      droppedMessages: parts.droppedMessages)
            let flowState: FlowState = status.code == .cancelled ? .cancelled : error == nil ? .completed : .failed
            return recorder.finished(state: flowState, error: error, requestBody: nil, grpc: outcome)
        }
    }

    /// A person killed the call at a breakpoint: it ends `CANCELLED`, as
    /// the app (client) or the client (server) is told.
    func killed() {
        finished(CallControl.killedStatus, error: FlowFailure.killed)
    }

    /// Whether the response head has been recorded.
    var hasResponded: Bool { flow.hasResponded }

    /// Whether the call has ended (a later end is ignored).
    var isFinished: Bool { flow.isFinished }
}

/// Where a call goes (client) or came in (server), as the flow's URL and
/// peer show it.
struct GRPCEndpoint: Sendable {
    /// `http`, or `https` when the app says its transport uses TLS (a
    /// transport does not tell its wrapper).
    var scheme: String
    /// The URL's authority: the server's address.
    var host: String
    /// The other end's address (`host:port`, a socket path, `in-process:<pid>`).
    var peer: String

    /// `server`: the address the call went to; `peer`: the other end.
    init(scheme: String, server: String, peer: String) {
        self.scheme = scheme
        host = Self.authority(server)
        self.peer = Self.address(peer)
    }

    /// A served call's endpoint: the URL's scheme and authority from the
    /// request's `:scheme` and `:authority` when the transport passed them
    /// on (HTTP/2 does), else `scheme` and the server's own address `local`.
    init(served metadata: Metadata, scheme: String, local: String, peer: String) {
        self.init(scheme: scheme, server: local, peer: peer)
        if let authority = metadata[stringValues: ":authority"].first(where: { _ in true }), !authority.isEmpty { host = authority }
        if let scheme = metadata[stringValues: ":scheme"].first(where: { _ in true }), !scheme.isEmpty { self.scheme = scheme }
    }

    func url(for descriptor: MethodDescriptor) -> String {
        "\(scheme)://\(host)/\(descriptor.service.fullyQualifiedService)/\(descriptor.method)"
    }

    /// grpc-swift's peer names (`ipv4:127.0.0.1:80`, `ipv6:[::1]:80`) as an address.
    static func address(_ peer: String) -> String {
        for prefix in ["ipv4:", "ipv6:"] where peer.hasPrefix(prefix) { return String(peer.dropFirst(prefix.count)) }
        return peer
    }

    /// A URL authority for a peer name: the address of an IP peer, else
    /// `localhost` for a socket path and the transport's name (`in-process`).
    static func authority(_ peer: String) -> String {
        let address = address(peer)
        guard address == peer else { return address }
        if peer.hasPrefix("unix:") { return "localhost" }
        return String(peer.prefix { $0 != ":" })
    }
}

extension Metadata {
    /// The metadata as header fields, in order; a binary (`-bin`) value in base64.
    var headers: [HTTPHeader] {
        map { HTTPHeader(name: $0.key, value: $0.value.encoded()) }
    }
}

extension GRPCStatus {
    init(_ status: Status) {
        self.init(code: status.code.rawValue, message: status.message.isEmpty ? nil : status.message)
    }
}

extension GRPCCallKind {
    init(_ type: MethodDescriptor.RPCType) {
        switch type {
        case .unary: self = .unary
        case .clientStreaming: self = .clientStreaming
        case .serverStreaming: self = .serverStreaming
        case .bidirectionalStreaming: self = .bidirectionalStreaming
        }
    }
}
#endif
