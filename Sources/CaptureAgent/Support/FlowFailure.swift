import Foundation
import WireProtocol

/// How the log describes an error any client reported, and whether it
/// means the request was cancelled rather than failed: one description for
/// every adapter.
///
/// ```swift
/// let error = FlowFailure.describe(URLError(.timedOut))   // NSURLErrorDomain, -1001
/// ```
package enum FlowFailure {
    /// A Foundation error (`URLError`, an `NSError`) keeps its domain, code
    /// and localized description; a Swift error (AsyncHTTPClient's, NIO's,
    /// `CancellationError`) is named by the module that declares its type,
    /// with code 0 and its own description.
    package static func describe(_ error: Error) -> FlowError {
        let nsError = error as NSError
        let type = String(reflecting: Swift.type(of: error))
        guard nsError.domain == type else {
            return FlowError(domain: nsError.domain, code: nsError.code, message: nsError.localizedDescription)
        }
        let module = type.split(separator: ".").first.map(String.init) ?? type
        return FlowError(domain: module, code: 0, message: String(describing: error))
    }

    /// Whether `error` says the request was cancelled: `CancellationError`
    /// or Foundation's `NSURLErrorCancelled` (a client's own cancellation
    /// error is its adapter's to add).
    package static func isCancellation(_ error: Error) -> Bool {
        if error is CancellationError { return true }
        let nsError = error as NSError
        return nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled
    }

    /// The error of a flow a viewer killed at a breakpoint, for clients
    /// whose cancellation carries no error of its own.
    package static let killed = FlowError(domain: "CaptureAgent", code: 0, message: "killed at a breakpoint")
}
