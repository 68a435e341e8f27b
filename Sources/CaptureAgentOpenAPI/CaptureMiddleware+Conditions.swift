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
    static func waitForLatency(of control: ExchangeControl) async throws {
        let latency = control.effect.latency
        if latency > .zero { try await Task.sleep(for: latency) }
    }

    /// `body` at `bytesPerSecond`, or as it is.
    static func paced(_ body: HTTPBody?, bytesPerSecond: Int?) -> HTTPBody? {
        guard let body, let bytesPerSecond else { return body }
        return HTTPBody(PacedSequence(base: body, bytesPerSecond: bytesPerSecond), length: body.length,
                        iterationBehavior: body.iterationBehavior)
    }

    /// The middleware stands in front of whatever transport the app chose,
    /// so a condition's failure is the error URLSession (and its transport)
    /// reports for the same thing; the runtime wraps it in its `ClientError`
    /// as it wraps a transport's.
    static func error(for failure: NetworkFailure, url: URL) -> URLError {
        let code: URLError.Code = switch failure {
        case .reset: .networkConnectionLost
        case .timeout: .timedOut
        case .offline: .notConnectedToInternet
        }
        return URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url])
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
