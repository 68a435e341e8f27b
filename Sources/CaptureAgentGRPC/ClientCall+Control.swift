// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import GRPCCore
import WireProtocol

/// A client call under a viewer's breakpoints (only when the app allows
/// control and the viewer asks for breakpoints as the call starts).
///
/// The request is held before it goes out: a unary or server-streaming
/// call after its one message (the person sees it), any other call at its
/// metadata (the messages wait behind it). The response of a call with one
/// response message (unary, client streaming) is kept back until its
/// status, then held. A kill ends the call for the app with
/// ``CallControl/killedStatus``: nothing more is written, and the
/// ``ResponseRelay`` hands the app that status even while the transport
/// would never answer.
struct ControlState: Sendable {
    var control: CallControl?
    /// Metadata kept back until the first message (see above).
    var metadata: Metadata?
    /// The call was killed or cancelled at a hold: nothing more is written.
    var stopped = false
}

extension ClientCall {
    /// Whether the request is held after its first message rather than at its metadata.
    static func holdsAtFirstMessage(_ type: MethodDescriptor.RPCType?) -> Bool {
        type == .unary || type == .serverStreaming
    }

    /// Whether the response is kept back until its status, to be held whole.
    static func holdsWholeResponse(_ type: MethodDescriptor.RPCType?) -> Bool {
        type == .unary || type == .clientStreaming
    }

    var control: CallControl? { controlState.withLock { $0.control } }

    /// Holds the request if the breakpoint filter matches it; throws when
    /// it is not to go out (a kill: the relay hands the app the killed
    /// status first).
    func releaseRequest<Bytes>(into relay: ResponseRelay<Bytes>) async throws {
        guard let control, let flow else { return }
        switch await control.holdRequest(flow) {
        case .proceed:
            return
        case .kill:
            controlState.withLock { $0.stopped = true }
            flow.killed()
            relay.end(with: .status(CallControl.killedStatus, [:]))
            throw RPCError(code: .cancelled, message: CallControl.killedStatus.message)
        case .cancelled:
            controlState.withLock { $0.stopped = true }
            throw CancellationError()
        }
    }

    /// Reads the transport's response parts for the app, through `relay`,
    /// recording each as it is read; holds a whole response when
    /// `holdsWhole` and the breakpoint filter matches its head.
    func pump<Bytes>(_ inbound: RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>, into relay: ResponseRelay<Bytes>,
                     holdsWhole: Bool) async {
        var parts = inbound.makeAsyncIterator()
        var kept: [RPCResponsePart<Bytes>]?
        var keptBytes = 0
        var headSeen = false
        func flush() async {
            for part in kept ?? [] { await relay.deliver(.success(part)) }
            kept = nil
        }
        while true {
            let part: RPCResponsePart<Bytes>
            do {
                guard let next = try await parts.next() else {
                    await flush()
                    return await relay.deliver(.success(nil))
                }
                part = next
            } catch {
                failed(error)
                await flush()
                return await relay.deliver(.failure(error))
            }
            if !headSeen {
                headSeen = true
                // The head is recorded before the filter sees the flow
                // (a status alone is a trailers-only response: status 200).
                if holdsWhole, let control, let flow {
                    if case .metadata(let metadata) = part { flow.responded(metadata) } else { flow.responded([:]) }
                    if control.holdsResponse(flow) { kept = [] }
                }
            }
            if case .status = part, let held = kept {
                return await holdResponse(ending: part, kept: held, into: relay)
            }
            _ = try? await received(part)
            guard kept != nil else {
                await relay.deliver(.success(part))
                continue
            }
            kept?.append(part)
            if case .message(let bytes) = part { keptBytes += bytes.count }
            if keptBytes > control?.holdLimit ?? 0 {
                control?.responseOutgrewHold()
                await flush()
            }
        }
    }

    /// The whole response is kept: holds it, then hands it to the app, or
    /// (a kill) the killed status instead.
    private func holdResponse<Bytes>(ending status: RPCResponsePart<Bytes>, kept: [RPCResponsePart<Bytes>],
                                     into relay: ResponseRelay<Bytes>) async {
        let outcome: CallControl.Outcome = if let control, let flow { await control.holdResponse(flow) } else { .proceed }
        switch outcome {
        case .proceed:
            _ = try? await received(status)
            for part in kept + [status] { await relay.deliver(.success(part)) }
            await relay.deliver(.success(nil))
        case .kill:
            flow?.killed()
            relay.end(with: .status(CallControl.killedStatus, [:]))
        case .cancelled:
            failed(CancellationError())
            relay.end()
        }
    }
}
#endif
