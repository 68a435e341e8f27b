// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import GRPCCore

/// The response side of a client call under a viewer's breakpoints: a pump
/// task reads the transport's parts and hands them over one at a time, and
/// the client library reads them here. A kill can then end the call with a
/// status of its own even while the client library waits for a part the
/// transport will never send (a request that never went out).
///
/// The pump reads at most one part ahead of the reader: the transport's
/// flow control is what it is without capture.
final class ResponseRelay<Bytes: GRPCContiguousBytes & Sendable>: AsyncSequence, Sendable {
    typealias Element = RPCResponsePart<Bytes>
    private typealias Handed = Result<Element?, any Error>

    private struct State {
        /// A part the pump read that the reader has not taken.
        var ready: Handed?
        /// The reader, waiting for a part.
        var reader: CheckedContinuation<Handed, Never>?
        /// The pump, waiting for its part to be taken.
        var pump: CheckedContinuation<Void, Never>?
        /// Nothing more is handed over (a kill, or the call is over).
        var ended = false
    }

    private let state = Locked(State())

    /// Hands `result` (a part, the end, or a failure) to the reader;
    /// returns once the reader took it, or at once when the relay ended.
    func deliver(_ result: Result<Element?, any Error>) async {
        await withCheckedContinuation { (taken: CheckedContinuation<Void, Never>) in
            let (reader, done) = state.withLock { state -> (CheckedContinuation<Handed, Never>?, Bool) in
                if state.ended { return (nil, true) }
                if let reader = state.reader {
                    state.reader = nil
                    return (reader, true)
                }
                state.ready = result
                state.pump = taken
                return (nil, false)
            }
            reader?.resume(returning: result)
            if done { taken.resume() }
        }
    }

    /// Ends the relay: the reader gets `last` (if any) and then the end;
    /// whatever the pump reads from now on is dropped.
    func end(with last: Element? = nil) {
        let (reader, pump) = state.withLock { state -> (CheckedContinuation<Handed, Never>?, CheckedContinuation<Void, Never>?) in
            guard !state.ended else { return (nil, nil) }
            state.ended = true
            defer { state.reader = nil; state.pump = nil }
            // A waiting reader gets `last` now; else the next read does.
            state.ready = state.reader == nil ? last.map { .success($0) } : nil
            return (state.reader, state.pump)
        }
        reader?.resume(returning: .success(last))
        pump?.resume()
    }

    /// The next part for the client library; nil at the end, or once the
    /// reading task is cancelled (as the transports' own streams do).
    fileprivate func next() async throws -> Element? {
        let handed = await withTaskCancellationHandler {
            await withCheckedContinuation { (reader: CheckedContinuation<Handed, Never>) in
                let (now, pump) = state.withLock { state -> (Handed?, CheckedContinuation<Void, Never>?) in
                    if let ready = state.ready {
                        state.ready = nil
                        defer { state.pump = nil }
                        return (ready, state.pump)
                    }
                    if state.ended || Task.isCancelled { return (.success(nil), nil) }
                    state.reader = reader
                    return (nil, nil)
                }
                if let now { reader.resume(returning: now) }
                pump?.resume()
            }
        } onCancel: {
            let reader = state.withLock { state in
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: .success(nil))
        }
        return try handed.get()
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(relay: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let relay: ResponseRelay

        func next() async throws -> Element? {
            try await relay.next()
        }
    }
}
#endif
