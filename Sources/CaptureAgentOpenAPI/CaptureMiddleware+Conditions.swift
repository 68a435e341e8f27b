// Built with the OpenAPI trait (on by default; Package.swift).
#if OpenAPI
import CaptureAgent
import Foundation
import HTTPTypes
import OpenAPIRuntime
import WireProtocol

/// A network condition in the middleware's terms: its waits are
/// `Task.sleep` (a cancelled operation stops waiting at once), and a paced
/// body is a sequence that hands on slices no faster than the pace.
extension CaptureMiddleware {
    /// Waits for the condition's latency.
    static func waitForLatency(of flow: ControlledFlow) async throws {
        let latency = flow.effect.latency
        if latency > .zero { try await Task.sleep(for: latency) }
    }

    /// `body` at `bytesPerSecond`, or as it is.
    static func paced(_ body: HTTPBody?, bytesPerSecond: Int?) -> HTTPBody? {
        guard let body, let bytesPerSecond else { return body }
        return HTTPBody(PacedSequence(base: body, bytesPerSecond: bytesPerSecond), length: body.length,
                        iterationBehavior: body.iterationBehavior)
    }
}

/// A body handed on in slices no faster than a bandwidth (``Pacer``).
struct PacedSequence: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    let base: HTTPBody
    let bytesPerSecond: Int

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), pacer: Pacer(bytesPerSecond: bytesPerSecond))
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPBody.Iterator
        var pacer: Pacer
        var rest: HTTPBody.ByteChunk = []

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            while rest.isEmpty {
                guard let chunk = try await base.next() else { return nil }
                rest = chunk
            }
            let slice = rest.prefix(pacer.sliceSize)
            rest = rest.dropFirst(slice.count)
            let due = pacer.due(afterSending: slice.count, now: .now)
            try await Task.sleep(until: due, clock: .continuous)
            return slice
        }
    }
}
#endif
