// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import GRPCCore
import WireProtocol

/// A grpc-swift 2 client transport that records every call made through it
/// as a flow: the request metadata, each message as its bytes (whatever the
/// serializer), the response metadata, the status and trailers.
///
/// Wrap the transport the client is made with:
///
/// ```swift
/// let agent = try CaptureAgent.start()
/// let transport = try HTTP2ClientTransport.Posix(target: .ipv4(address: "127.0.0.1", port: 50051),
///                                                transportSecurity: .plaintext)
/// try await withGRPCClient(transport: agent.capture(transport)) { client in … }
/// ```
///
/// Every part is passed on unchanged and at once. A call made while a
/// captured server handles a call names that call as its parent. With
/// control allowed (``CaptureAgent/Configuration/allowsControl``), a
/// viewer's breakpoint holds a matching call's request and, for a unary
/// call, its response; a kill ends the call with status `CANCELLED`.
public struct CapturingClientTransport<Base: ClientTransport>: ClientTransport {
    public typealias Bytes = Base.Bytes

    /// The transport the calls go through.
    public let base: Base
    private let calls: FlowNumbering
    private let scheme: String

    init(base: Base, agent: CaptureAgent, scheme: String) {
        self.base = base
        calls = FlowNumbering(agent: agent)
        self.scheme = scheme
    }

    public var retryThrottle: RetryThrottle? { base.retryThrottle }

    public func connect() async throws {
        try await base.connect()
    }

    public func beginGracefulShutdown() {
        base.beginGracefulShutdown()
    }

    public func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? {
        base.config(forMethod: descriptor)
    }

    public func withStream<T: Sendable>(
        descriptor: MethodDescriptor,
        options: CallOptions,
        _ closure: (_ stream: RPCStream<Inbound, Outbound>, _ context: ClientContext) async throws -> T
    ) async throws -> T {
        guard calls.agent.isCapturing else { return try await base.withStream(descriptor: descriptor, options: options, closure) }
        let parentID = CaptureAgent.currentInboundFlowID
        let deadline = options.timeout.map { ContinuousClock.now.advanced(by: $0) }
        return try await base.withStream(descriptor: descriptor, options: options) { stream, context in
            let call = ClientCall(
                agent: calls.agent, descriptor: descriptor, parentID: parentID, sessionID: calls.sessionID, taskID: calls.nextTaskID(),
                endpoint: GRPCEndpoint(scheme: scheme, server: context.remotePeer, peer: context.remotePeer),
                deadline: deadline, timeout: options.timeout
            )
            defer { call.closed() }
            guard call.isControlled else {
                let recorded = RPCStream(
                    descriptor: stream.descriptor,
                    inbound: RPCAsyncSequence(wrapping: RecordingResponseParts(base: stream.inbound, call: call)),
                    outbound: RPCWriter.Closable(wrapping: RecordingRequestWriter(base: stream.outbound, call: call))
                )
                return try await closure(recorded, context)
            }
            return try await controlled(stream, call: call) { try await closure($0, context) }
        }
    }

    /// A call a viewer's breakpoints may hold (ClientCall+Control.swift):
    /// the response comes to the app through a relay a pump task fills,
    /// for as long as the app's closure runs.
    private func controlled<T: Sendable>(
        _ stream: RPCStream<Inbound, Outbound>, call: ClientCall,
        _ closure: (_ stream: RPCStream<Inbound, Outbound>) async throws -> T
    ) async throws -> T {
        let relay = ResponseRelay<Bytes>()
        let type = stream.descriptor.type
        let recorded = RPCStream(
            descriptor: stream.descriptor,
            inbound: RPCAsyncSequence(wrapping: relay),
            outbound: RPCWriter.Closable(wrapping: HeldRequestWriter(
                base: stream.outbound, call: call, relay: relay, holdsAtFirstMessage: ClientCall.holdsAtFirstMessage(type)))
        )
        return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { await call.pump(stream.inbound, into: relay, holdsWhole: ClientCall.holdsWholeResponse(type)) }
            defer {
                relay.end()
                group.cancelAll()
            }
            return try await closure(recorded)
        }
    }
}

extension CaptureAgent {
    /// Wraps a grpc-swift 2 client transport so every call made through it
    /// is captured. `scheme` is what the flows' URLs start with: say
    /// `https` for a transport that uses TLS (a transport does not tell).
    ///
    /// ```swift
    /// let client = GRPCClient(transport: agent.capture(transport))
    /// ```
    public func capture<Transport: ClientTransport>(_ transport: Transport, scheme: String = "http") -> CapturingClientTransport<Transport> {
        CapturingClientTransport(base: transport, agent: self, scheme: scheme)
    }
}

/// The request side of a captured client call: each part is recorded, then
/// written on as it was.
struct RecordingRequestWriter<Bytes: GRPCContiguousBytes & Sendable>: ClosableRPCWriterProtocol {
    typealias Element = RPCRequestPart<Bytes>

    let base: RPCWriter<RPCRequestPart<Bytes>>.Closable
    let call: ClientCall

    func write(_ element: Element) async throws {
        switch element {
        case .metadata(let metadata):
            try await call.started(metadata)
        case .message(let bytes):
            try await call.sending(bytes)
        }
        try await base.write(element)
    }

    func write(contentsOf elements: some Sequence<Element>) async throws {
        for element in elements { try await write(element) }
    }

    func finish() async {
        call.requestEnded()
        await base.finish()
    }

    func finish(throwing error: any Error) async {
        call.requestEnded()
        await base.finish(throwing: error)
    }
}

/// The request side of a client call a viewer's breakpoints may hold: as
/// ``RecordingRequestWriter``, but the request is released (or killed)
/// by ``ClientCall/releaseRequest(into:)`` before its first part goes out.
struct HeldRequestWriter<Bytes: GRPCContiguousBytes & Sendable>: ClosableRPCWriterProtocol {
    typealias Element = RPCRequestPart<Bytes>

    let base: RPCWriter<RPCRequestPart<Bytes>>.Closable
    let call: ClientCall
    let relay: ResponseRelay<Bytes>
    let holdsAtFirstMessage: Bool

    func write(_ element: Element) async throws {
        if call.controlState.withLock({ $0.stopped }) { throw CallControl.stoppedError }
        switch element {
        case .metadata(let metadata):
            try await call.started(metadata)
            if holdsAtFirstMessage { return call.controlState.withLock { $0.metadata = metadata } }
            try await call.releaseRequest(into: relay)
        case .message(let bytes):
            try await call.sending(bytes)
            if let metadata = call.controlState.withLock({ state in defer { state.metadata = nil }; return state.metadata }) {
                try await call.releaseRequest(into: relay)
                try await base.write(.metadata(metadata))
            }
        }
        try await base.write(element)
    }

    func write(contentsOf elements: some Sequence<Element>) async throws {
        for element in elements { try await write(element) }
    }

    func finish() async {
        guard let metadata = takeUnsent() else { return }
        // No message came (a serializer failed): the metadata goes out unheld.
        if let metadata { try? await base.write(.metadata(metadata)) }
        call.requestEnded()
        await base.finish()
    }

    func finish(throwing error: any Error) async {
        guard let metadata = takeUnsent() else { return }
        if let metadata { try? await base.write(.metadata(metadata)) }
        call.requestEnded()
        await base.finish(throwing: error)
    }

    /// The metadata still kept back (inner nil: none); nil when the call
    /// was stopped at a hold and nothing more goes out.
    private func takeUnsent() -> Metadata?? {
        call.controlState.withLock { state in
            guard !state.stopped else { return nil }
            defer { state.metadata = nil }
            return .some(state.metadata)
        }
    }
}

/// The response side of a captured client call: each part is recorded as
/// the client library reads it.
struct RecordingResponseParts<Bytes: GRPCContiguousBytes & Sendable>: AsyncSequence, Sendable {
    typealias Element = RPCResponsePart<Bytes>

    let base: RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>
    let call: ClientCall

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), call: call)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>.AsyncIterator
        let call: ClientCall

        mutating func next() async throws -> Element? {
            do {
                guard let part = try await base.next() else { return nil }
                return try await call.received(part)
            } catch {
                call.failed(error)
                throw error
            }
        }
    }
}
#endif
