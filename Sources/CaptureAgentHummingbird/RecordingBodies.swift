// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import Hummingbird
import NIOCore
import WireProtocol

/// The request body as the handler reads it: each buffer goes on unchanged
/// and is recorded on the way; the end of the body marks the request
/// received in full.
struct RecordingRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let flow: InboundRecording

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let flow: InboundRecording

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else {
                flow.requestEnded()
                return nil
            }
            buffer.withUnsafeReadableBytes { flow.requestBody($0) }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), flow: flow)
    }
}

/// The writer a response body writes to: each buffer goes to the client
/// first, then into the record. A write that fails means the client went
/// away; the body's own failure is told apart from it by ``failure(_:)``.
final class RecordingResponseWriter: ResponseBodyWriter {
    private var base: any ResponseBodyWriter
    private let flow: InboundRecording
    private var written = 0
    private var clientError: (any Error)?

    init(base: any ResponseBodyWriter, flow: InboundRecording) {
        self.base = base
        self.flow = flow
    }

    func write(_ buffer: ByteBuffer) async throws {
        do {
            try await base.write(buffer)
        } catch {
            clientError = error
            throw error
        }
        written += buffer.readableBytes
        buffer.withUnsafeReadableBytes { flow.responseBody($0) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {
        do {
            try await base.finish(trailingHeaders)
        } catch {
            clientError = error
            throw error
        }
        flow.finished()
    }

    /// How the flow ends when writing the body threw `error`.
    func failure(_ error: any Error) -> FlowError {
        clientError == nil ? .responseBodyFailed(after: written, error) : .clientWentAway(after: written, clientError ?? error)
    }
}

/// Takes a body and keeps nothing: to record an error response the
/// framework will write itself.
struct DiscardingWriter: ResponseBodyWriter {
    mutating func write(_ buffer: ByteBuffer) async throws {}
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
#endif
