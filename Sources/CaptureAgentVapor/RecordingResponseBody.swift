// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgent
import NIOConcurrencyHelpers
import NIOCore
import Vapor
import WireProtocol

/// A streamed response body (`Response.Body(stream:)`, `asyncStream:`,
/// `managedAsyncStream:`) recorded as it goes to the client: each buffer
/// once written, and the flow's end when the stream ends, fails, or the
/// client goes away.
///
/// Vapor gives a middleware no way to see a stream's writes (the body's
/// storage is internal), so this reads the stream's callback and count by
/// reflection from the body the handler returned, and the middleware hands
/// Vapor a body that calls it with a recording writer. If Vapor's storage
/// changes shape, reflection finds nothing and the body goes out untouched
/// and unrecorded, as before.
enum RecordingResponseBody {
    /// `body` wrapped so its writes are recorded into `flow`, which the
    /// stream ends; nil when `body` is not a stream.
    static func wrapping(_ body: Vapor.Response.Body, flow: InboundRecording) -> Vapor.Response.Body? {
        guard let storage = Mirror(reflecting: body).descendant("storage"),
              let stream = Mirror(reflecting: storage).children.first else { return nil }
        let fields = Mirror(reflecting: stream.value)
        let count = fields.descendant("count") as? Int ?? -1
        let written = WrittenBytes()
        switch stream.label {
        case "stream":
            guard let callback = fields.descendant("callback") as? @Sendable (any BodyStreamWriter) -> Void else { return nil }
            let recording: @Sendable (any BodyStreamWriter) -> Void = { writer in
                callback(RecordingStreamWriter(base: writer, flow: flow, written: written))
            }
            return count >= 0 ? .init(stream: recording, count: count) : .init(stream: recording)
        case "asyncStream":
            guard let callback = fields.descendant("callback") as? @Sendable (any AsyncBodyStreamWriter) async throws -> Void else { return nil }
            let recording: @Sendable (any AsyncBodyStreamWriter) async throws -> Void = { writer in
                do {
                    try await callback(RecordingAsyncStreamWriter(base: writer, flow: flow, written: written))
                } catch {
                    // The handler's stream threw before it ended (a client gone away ended it already).
                    flow.finished(error: .responseBodyFailed(after: written.count, error))
                    throw error
                }
            }
            return count >= 0 ? .init(asyncStream: recording, count: count) : .init(asyncStream: recording)
        default:
            return nil
        }
    }
}

/// The bytes of one response written to the client so far.
final class WrittenBytes: Sendable {
    private let value = NIOLockedValueBox(0)
    var count: Int { value.withLockedValue { $0 } }
    func add(_ bytes: Int) { value.withLockedValue { $0 += bytes } }
}

/// Records what the stream writes once the client's side took it: a write
/// that fails means the client went away. Then Vapor's stream is ended with
/// `.error`: its writer asserts (debug builds) that every stream ends with
/// `.end` or `.error`, and a handler whose write threw usually just returns;
/// the client is gone, so this changes nothing anyone sees.
private struct RecordingStreamWriter: BodyStreamWriter {
    let base: any BodyStreamWriter
    let flow: InboundRecording
    let written: WrittenBytes

    var eventLoop: any EventLoop { base.eventLoop }

    func write(_ result: BodyStreamResult, promise: EventLoopPromise<Void>?) {
        let sent = eventLoop.makePromise(of: Void.self)
        sent.futureResult.whenComplete { [flow, written] outcome in
            switch (result, outcome) {
            case (.buffer(let buffer), .success):
                written.add(buffer.readableBytes)
                buffer.withUnsafeReadableBytes { flow.responseBody($0) }
            case (.end, .success):
                flow.finished()
            case (.error(let error), _):
                flow.finished(error: .responseBodyFailed(after: written.count, error))
            case (_, .failure(let error)):
                flow.finished(error: .clientWentAway(after: written.count, error))
                if case .buffer = result { base.write(.error(error), promise: nil) }
            }
            promise?.completeWith(outcome)
        }
        base.write(result, promise: sent)
    }
}

/// The same, for an `asyncStream:` body.
private struct RecordingAsyncStreamWriter: AsyncBodyStreamWriter {
    let base: any AsyncBodyStreamWriter
    let flow: InboundRecording
    let written: WrittenBytes

    func write(_ result: BodyStreamResult) async throws {
        do {
            try await base.write(result)
        } catch {
            switch result {
            case .error(let failure):
                flow.finished(error: .responseBodyFailed(after: written.count, failure))
            case .buffer:
                flow.finished(error: .clientWentAway(after: written.count, error))
                try? await base.write(.error(error))
            case .end:
                flow.finished(error: .clientWentAway(after: written.count, error))
            }
            throw error
        }
        switch result {
        case .buffer(let buffer):
            written.add(buffer.readableBytes)
            buffer.withUnsafeReadableBytes { flow.responseBody($0) }
        case .end:
            flow.finished()
        case .error(let error):
            flow.finished(error: .responseBodyFailed(after: written.count, error))
        }
    }
}
#endif
