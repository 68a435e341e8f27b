// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Everything an app can observe of one AsyncHTTPClient exchange: status,
/// header fields in order, every body byte, the redirect history (async API),
/// and the error, described.
struct AHCOutcome: Equatable, CustomStringConvertible {
    var status: Int?
    var version: String?
    var headers: [String] = []
    var body: [UInt8] = []
    var history: [String] = []
    var error: String?

    var description: String {
        "status \(status.map(String.init) ?? "-"), \(body.count) bytes, headers \(headers), history \(history), error \(error ?? "-")"
    }

    /// Header fields as the app sees them, without `Date` (which moves on between runs).
    static func fields(_ headers: HTTPHeaders) -> [String] {
        headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name): \($0.value)" }
    }
}

/// How the app makes the request.
enum AHCAPI: String, CaseIterable {
    /// `execute(_:timeout:)`, the body read as an async sequence.
    case async
    /// `execute(request:)`, an `EventLoopFuture` of the whole response (what Vapor uses).
    case future
}

/// What one exchange sends: method, URL, header fields, and a body given
/// whole or streamed in chunks.
struct AHCRequest: Sendable {
    var method: HTTPMethod = .GET
    var url: String
    var headers: [(String, String)] = []
    var body: [UInt8]?
    /// Send the body as a stream of chunks of this size, length unknown.
    var streamChunk: Int?

    func asyncRequest() -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            if let chunk = streamChunk {
                let chunks = stride(from: 0, to: body.count, by: chunk).map { ByteBuffer(bytes: body[$0 ..< min($0 + chunk, body.count)]) }
                request.body = .stream(chunks.async, length: .unknown)
            } else {
                request.body = .bytes(ByteBuffer(bytes: body))
            }
        }
        return request
    }

    func futureRequest() throws -> HTTPClient.Request {
        var request = try HTTPClient.Request(url: url, method: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            if let chunk = streamChunk {
                request.body = .stream { writer in
                    var future = writer.write(.byteBuffer(ByteBuffer()))
                    for start in stride(from: 0, to: body.count, by: chunk) {
                        let part = ByteBuffer(bytes: body[start ..< min(start + chunk, body.count)])
                        future = future.flatMap { writer.write(.byteBuffer(part)) }
                    }
                    return future
                }
            } else {
                request.body = .bytes(body)
            }
        }
        return request
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence, one at a time.
    var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}

/// Reads the body of an async response: all of it, or chunk by chunk with a
/// pause after each, or until `stopAfter` bytes and then cancels.
enum BodyReading: Sendable {
    case whole
    case slowly(pause: Duration)
    case cancelAfter(bytes: Int)
}

/// Runs one exchange with a fresh client and describes what the app saw.
func performAHC(
    _ request: AHCRequest,
    api: AHCAPI,
    configuration: HTTPClient.Configuration,
    reading: BodyReading = .whole,
    timeout: TimeAmount = .seconds(30)
) async -> AHCOutcome {
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    var outcome = AHCOutcome()
    switch api {
    case .async:
        let task = Task { () -> AHCOutcome in
            var outcome = AHCOutcome()
            do {
                let response = try await client.execute(request.asyncRequest(), timeout: timeout)
                outcome.status = Int(response.status.code)
                outcome.version = "\(response.version)"
                outcome.headers = AHCOutcome.fields(response.headers)
                outcome.history = response.history.map { "\($0.request.method.rawValue) \($0.request.url) -> \($0.responseHead.status.code)" }
                for try await chunk in response.body {
                    outcome.body.append(contentsOf: chunk.readableBytesView)
                    switch reading {
                    case .whole: break
                    case .slowly(let pause): try await pace(pause)
                    case .cancelAfter(let bytes):
                        if outcome.body.count >= bytes { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                }
            } catch {
                outcome.error = describe(error)
            }
            return outcome
        }
        outcome = await task.value
    case .future:
        do {
            let response = try await client.execute(request: request.futureRequest(), deadline: .now() + timeout).get()
            outcome.status = Int(response.status.code)
            outcome.version = "\(response.version)"
            outcome.headers = AHCOutcome.fields(response.headers)
            outcome.body = response.body.map { Array($0.readableBytesView) } ?? []
        } catch {
            outcome.error = describe(error)
        }
    }
    try? await client.shutdown()
    return outcome
}

/// An HTTP/1.1 client configuration for the loopback server: short timeouts,
/// no TLS surprises, redirects followed as by default.
func ahcConfiguration(decompression: Bool = false, readTimeout: TimeAmount? = nil, tls: Bool = false, http2: Bool = false) -> HTTPClient.Configuration {
    var configuration = HTTPClient.Configuration()
    configuration.timeout = .init(connect: .seconds(5), read: readTimeout)
    configuration.decompression = decompression ? .enabled(limit: .none) : .disabled
    if tls {
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        tlsConfiguration.trustRoots = .certificates([TLSTestServer.certificate])
        configuration.tlsConfiguration = tlsConfiguration
        configuration.httpVersion = http2 ? .automatic : .http1Only
    }
    return configuration
}

extension ReceivedRequest {
    /// The header fields as `name: value`, names lowercased, sorted.
    var fieldSet: [String] {
        headers.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }
}

extension NetworkLog {
    /// The header fields that went on the wire, app's and client's, as `name: value`, names lowercased, sorted.
    var sentFieldSet: [String] {
        request.headersAsSent.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }
}
#endif
