// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore

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
}
#endif
