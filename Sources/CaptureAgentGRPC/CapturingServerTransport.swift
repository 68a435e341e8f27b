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
/// flow); every part is then passed on unchanged and at once. With control
/// allowed (``CaptureAgent/Configuration/allowsControl``), a viewer's
/// breakpoint holds a matching call before its handler runs and, for a
/// unary or client-streaming call, its whole response; a kill answers the
/// client `CANCELLED`.
public struct CapturingServerTransport<Base: ServerTransport>: ServerTransport {
    public typealias Bytes = Base.Bytes

    /// The transport the calls come in through.
    public let base: Base
    private let calls: FlowNumbering
    private let scheme: String

    init(base: Base, agent: CaptureAgent, scheme: String) {
        self.base = base
        calls = FlowNumbering(agent: agent)
        self.scheme = scheme
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
        try await base.listen { [calls, scheme] stream, context in
            let agent = calls.agent
            guard agent.isCapturing else { return await streamHandler(stream, context) }
            let inbound = RecordingRequestParts(base: stream.inbound)
            guard case .metadata(let metadata)? = await inbound.peek(),
                  let call = GRPCCallRecording(
                      agent: agent, descriptor: stream.descriptor, metadata: metadata,
                      endpoint: GRPCEndpoint(served: metadata, scheme: scheme, local: context.localPeer, peer: context.remotePeer),
                      direction: .inbound, parentID: nil, sessionID: calls.sessionID, taskID: calls.nextTaskID()
                  ) else {
                return await streamHandler(RPCStream(descriptor: stream.descriptor, inbound: RPCAsyncSequence(wrapping: inbound),
                                                     outbound: stream.outbound), context)
            }
            inbound.record(into: call)
            let control = CallControl(agent: agent, call: call)
            if let control {
                // A unary or server-streaming call is held with its one message, so the person sees it.
                if ClientCall.holdsAtFirstMessage(stream.descriptor.type) { await inbound.peekMessage() }
                if await control.holdRequest(call) == .kill {
                    call.killed()
                    try? await stream.outbound.write(.status(CallControl.killedStatus, [:]))
                    return await stream.outbound.finish()
                }
            }
            let recorded = RPCStream(
                descriptor: stream.descriptor,
                inbound: RPCAsyncSequence(wrapping: inbound),
                outbound: RPCWriter.Closable(wrapping: RecordingResponseWriter(
                    base: stream.outbound, call: call,
                    control: ClientCall.holdsWholeResponse(stream.descriptor.type) ? control : nil))
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
    /// Parts read ahead of the server, in order (recorded as they were read).
    private var peeked: [Result<Element?, any Error>] = []
    private var call: GRPCCallRecording?

    init(base: RPCAsyncSequence<RPCRequestPart<Bytes>, any Error>) {
        iterator = base.makeAsyncIterator()
    }

    /// Reads the first part, which the server then reads again; nil when
    /// the stream failed or was empty.
    func peek() async -> Element? {
        let first = await readAhead()
        return try? first.get()
    }

    /// Reads the next part (the first message, for a breakpoint to show),
    /// recorded now, which the server then reads again.
    func peekMessage() async {
        _ = await readAhead()
    }

    private func readAhead() async -> Result<Element?, any Error> {
        let part: Result<Element?, any Error>
        do {
            part = .success(try await read())
        } catch {
            part = .failure(error)
        }
        peeked.append(part)
        return part
    }

    /// Messages read from now on are recorded into `call`.
    func record(into call: GRPCCallRecording) {
        self.call = call
    }

    fileprivate func next() async throws -> Element? {
        if !peeked.isEmpty { return try peeked.removeFirst().get() }
        return try await read()
    }

    private func read() async throws -> Element? {
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
///
/// With `control` (a viewer's breakpoints, for a call with one response
/// message), a response whose head the breakpoint filter matches is kept
/// back until its status and held; a kill answers the client
/// ``CallControl/killedStatus`` instead of what the handler wrote.
struct RecordingResponseWriter<Bytes: GRPCContiguousBytes & Sendable>: ClosableRPCWriterProtocol {
    typealias Element = RPCResponsePart<Bytes>

    let base: RPCWriter<RPCResponsePart<Bytes>>.Closable
    let call: GRPCCallRecording
    let control: CallControl?
    /// The parts kept back for a response hold; nil while none is.
    private let kept = KeptParts<Element>()

    init(base: RPCWriter<RPCResponsePart<Bytes>>.Closable, call: GRPCCallRecording, control: CallControl? = nil) {
        self.base = base
        self.call = call
        self.control = control
    }

    func write(_ element: Element) async throws {
        switch element {
        case .metadata(let metadata):
            call.responded(metadata)
            if let control, control.holdsResponse(call) { return kept.parts.withLock { $0 = [element] } }
        case .message(let bytes):
            call.message(.response, bytes)
            switch keep(element) {
            case .notKeeping: break
            case .kept: return
            case .outgrew(let held):
                // Past the hold's limit: what was kept goes on unheld.
                control?.responseOutgrewHold()
                for part in held { try await base.write(part) }
                return
            }
        case .status:
            guard let control else { break }
            var held = kept.parts.withLock { kept in
                defer { kept = nil }
                return kept
            }
            if held == nil, !call.hasResponded {
                // A trailers-only answer: its head is what the filter sees.
                call.responded([:])
                if control.holdsResponse(call) { held = [] }
            }
            guard let held else { break }
            guard await control.holdResponse(call) == .proceed else {
                call.killed()
                return try await base.write(.status(CallControl.killedStatus, [:]))
            }
            for part in held { try await base.write(part) }
        }
        try await pass(element)
    }

    private enum Keeping {
        case notKeeping
        case kept
        /// The kept parts grew past the hold's limit: these go on now.
        case outgrew([Element])
    }

    /// Keeps a message back while a response hold keeps the response.
    private func keep(_ element: Element) -> Keeping {
        guard let control else { return .notKeeping }
        return kept.parts.withLock { kept in
            guard var held = kept else { return .notKeeping }
            held.append(element)
            let size = held.reduce(0) { size, part in
                if case .message(let bytes) = part { size + bytes.count } else { size }
            }
            guard size > control.holdLimit else {
                kept = held
                return .kept
            }
            kept = nil
            return .outgrew(held)
        }
    }

    /// Writes `element` on, recording a status once the client has it.
    private func pass(_ element: Element) async throws {
        guard case .status(let status, let trailers) = element else { return try await base.write(element) }
        do {
            try await base.write(element)
        } catch {
            call.finished(status, trailers: trailers, error: .clientWentAway)
            throw error
        }
        call.finished(status, trailers: trailers)
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

/// The response parts a hold keeps back (a writer is a value; this is shared).
final class KeptParts<Element: Sendable>: Sendable {
    let parts = Locked<[Element]?>(nil)
}

extension FlowError {
    /// What a served call ends with when its status could not be sent.
    static let clientWentAway = FlowError(domain: "grpc-swift", code: 1, message: "the client went away before the status was sent")
}
#endif
