// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import GRPCCore
import WireProtocol

/// A grpc-swift 2 server transport that records every call the server
/// receives as an inbound flow, and runs its handler so that the calls the
/// handler makes (through a captured gRPC client, AsyncHTTPClient, OpenAPI
/// client or URLSession) name that flow as their parent.
///
/// Wrap the transport the server is made with:
///
/// ```swift
/// let agent = try CaptureAgent.start()
/// let transport = HTTP2ServerTransport.Posix(address: .ipv4(host: "127.0.0.1", port: 50051),
///                                            transportSecurity: .plaintext)
/// let server = GRPCServer(transport: agent.capture(transport), services: [EchoService()])
/// ```
///
/// The request metadata is read before the handler runs (it names the
/// flow); every part is then passed on unchanged and at once.
public struct CapturingServerTransport<Base: ServerTransport>: ServerTransport {
    public typealias Bytes = Base.Bytes

    /// The transport the calls come in through.
    public let base: Base
    private let agent: CaptureAgent
    private let scheme: String
    /// This server's number among the agent's clients and servers.
    private let sessionID: Int
    private let callNumbers = Counter()

    init(base: Base, agent: CaptureAgent, scheme: String) {
        self.base = base
        self.agent = agent
        self.scheme = scheme
        sessionID = agent.nextSessionID()
    }

    public func configure(context: GRPCServerContext) {
        base.configure(context: context)
    }

    public func beginGracefulShutdown() {
        base.beginGracefulShutdown()
    }

    public func listen(
        streamHandler: @escaping @Sendable (_ stream: RPCStream<Inbound, Outbound>, _ context: ServerContext) async -> Void
    ) async throws {
        try await base.listen { [agent, scheme, sessionID, callNumbers] stream, context in
            guard agent.isCapturing else { return await streamHandler(stream, context) }
            let inbound = RecordingRequestParts(base: stream.inbound)
            guard case .metadata(let metadata)? = await inbound.peek(),
                  let call = GRPCCallRecording(
                      agent: agent, descriptor: stream.descriptor, metadata: metadata,
                      endpoint: GRPCEndpoint(scheme: scheme, server: context.localPeer, peer: context.remotePeer),
                      direction: .inbound, parentID: nil, sessionID: sessionID, taskID: callNumbers.next()
                  ) else {
                return await streamHandler(RPCStream(descriptor: stream.descriptor, inbound: RPCAsyncSequence(wrapping: inbound),
                                                     outbound: stream.outbound), context)
            }
            inbound.record(into: call)
            let recorded = RPCStream(
                descriptor: stream.descriptor,
                inbound: RPCAsyncSequence(wrapping: inbound),
                outbound: RPCWriter.Closable(wrapping: RecordingResponseWriter(base: stream.outbound, call: call))
            )
            await CaptureAgent.handling(call.id) { await streamHandler(recorded, context) }
            call.finished(Status(code: .cancelled, message: "the call ended without a status: the client went away"),
                          error: .clientWentAway)
        }
    }
}

extension CaptureAgent {
    /// Wraps a grpc-swift 2 server transport so every call the server
    /// receives is captured as an inbound flow. `scheme` is what the flows'
    /// URLs start with: say `https` for a transport that uses TLS.
    ///
    /// ```swift
    /// let server = GRPCServer(transport: agent.capture(transport), services: [EchoService()])
    /// ```
    public func capture<Transport: ServerTransport>(_ transport: Transport, scheme: String = "http") -> CapturingServerTransport<Transport> {
        CapturingServerTransport(base: transport, agent: self, scheme: scheme)
    }
}

/// The request side of a captured server call. Its first part (the request
/// metadata) is read before the handler runs, and handed to the server
/// first; each message is recorded as the server reads it.
final class RecordingRequestParts<Bytes: GRPCContiguousBytes & Sendable>: AsyncSequence, @unchecked Sendable {
    typealias Element = RPCRequestPart<Bytes>

    // The server reads its inbound once, on one task at a time: the
    // iterator and the peeked part are never touched concurrently.
    private var iterator: RPCAsyncSequence<RPCRequestPart<Bytes>, any Error>.AsyncIterator
    private var peeked: Result<Element?, any Error>?
    private var call: GRPCCallRecording?

    init(base: RPCAsyncSequence<RPCRequestPart<Bytes>, any Error>) {
        iterator = base.makeAsyncIterator()
    }

    /// Reads the first part, which the server then reads again; nil when
    /// the stream failed or was empty.
    func peek() async -> Element? {
        var iterator = self.iterator
        defer { self.iterator = iterator }
        do {
            let first = try await iterator.next()
            peeked = .success(first)
            return first
        } catch {
            peeked = .failure(error)
            return nil
        }
    }

    /// Messages read from now on are recorded into `call`.
    func record(into call: GRPCCallRecording) {
        self.call = call
    }

    fileprivate func next() async throws -> Element? {
        if let peeked {
            self.peeked = nil
            return try peeked.get()
        }
        var iterator = self.iterator
        defer { self.iterator = iterator }
        guard let part = try await iterator.next() else {
            call?.requestEnded()
            return nil
        }
        if case .message(let bytes) = part { call?.message(.request, bytes) }
        return part
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(parts: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let parts: RecordingRequestParts

        func next() async throws -> Element? {
            try await parts.next()
        }
    }
}

/// The response side of a captured server call: each part is recorded as
/// the server writes it.
struct RecordingResponseWriter<Bytes: GRPCContiguousBytes & Sendable>: ClosableRPCWriterProtocol {
    typealias Element = RPCResponsePart<Bytes>

    let base: RPCWriter<RPCResponsePart<Bytes>>.Closable
    let call: GRPCCallRecording

    func write(_ element: Element) async throws {
        switch element {
        case .metadata(let metadata):
            call.responded(metadata)
        case .message(let bytes):
            call.message(.response, bytes)
        case .status(let status, let trailers):
            do {
                try await base.write(element)
            } catch {
                call.finished(status, trailers: trailers, error: .clientWentAway)
                throw error
            }
            return call.finished(status, trailers: trailers)
        }
        try await base.write(element)
    }

    func write(contentsOf elements: some Sequence<Element>) async throws {
        for element in elements { try await write(element) }
    }

    func finish() async {
        await base.finish()
    }

    func finish(throwing error: any Error) async {
        await base.finish(throwing: error)
    }
}

extension FlowError {
    /// What a served call ends with when its status could not be sent.
    static let clientWentAway = FlowError(domain: "grpc-swift", code: 1, message: "the client went away before the status was sent")
}
#endif
