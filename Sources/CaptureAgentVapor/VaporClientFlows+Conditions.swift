// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A network condition in the terms of Vapor's client, which hands the app
/// a whole response: the latency is waited before the app gets it, and a
/// paced body costs the time its bytes take at the pace (`Task.sleep`, so a
/// cancelled request stops waiting).
extension VaporClientFlows {
    /// How long `count` bytes take at `bytesPerSecond` (nothing when unpaced).
    static func transfer(_ count: Int, at bytesPerSecond: Int?) -> Duration {
        guard let bytesPerSecond, count > 0 else { return .zero }
        return .nanoseconds(Int64(Double(count) / Double(bytesPerSecond) * 1e9))
    }

    /// Waits `duration`, if any; throws when the request is cancelled.
    static func pause(_ duration: Duration) async throws {
        if duration > .zero { try await Task.sleep(for: duration) }
    }

    /// Waits `duration`; a cancelled request ends its flow as cancelled and throws.
    static func wait(_ duration: Duration, flow: FlowRecording) async throws {
        guard duration > .zero else { return }
        do {
            try await Task.sleep(for: duration)
        } catch {
            flow.finish { recorder, _ in recorder.finished(state: .cancelled, error: FlowFailure.describe(error), requestBody: nil) }
            throw error
        }
    }

    /// What Vapor's client (AsyncHTTPClient) reports for the same failure:
    /// as the AsyncHTTPClient adapter's `RequestControlHandler.error(for:)`,
    /// which this target cannot reach (it does not depend on that adapter).
    static func error(for failure: NetworkFailure) -> Error {
        switch failure {
        case .reset: IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        case .timeout: HTTPClientError.readTimeout
        case .offline: IOError(errnoCode: ENETUNREACH, reason: "connect")
        }
    }
}
#endif
