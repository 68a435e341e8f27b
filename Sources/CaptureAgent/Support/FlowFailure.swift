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

/// The MIME type of a `Content-Type` value: `text/html; charset=utf-8` →
/// `text/html`, byte by byte (this runs for every response; Foundation's
/// trimming costs more than the rest of it, and `lowercased()` applies
/// Unicode case mapping, so ASCII is lowered here; docs/BENCHMARKS.md, "Costs behind the code").
package func mimeType(of contentType: String?) -> String? {
    guard var contentType else { return nil }
    return contentType.withUTF8 { all -> String in
        var start = 0
        var end = all.firstIndex(of: UInt8(ascii: ";")) ?? all.count
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while start < end, isBlank(all[start]) { start += 1 }
        while end > start, isBlank(all[end - 1]) { end -= 1 }
        let bytes = UnsafeBufferPointer(rebasing: all[start ..< end])
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return String(decoding: bytes, as: UTF8.self).lowercased() }
        return String(unsafeUninitializedCapacity: bytes.count) { out in
            for index in bytes.indices { out[index] = bytes[index].lowercasedASCII }
            return bytes.count
        }
    }
}
