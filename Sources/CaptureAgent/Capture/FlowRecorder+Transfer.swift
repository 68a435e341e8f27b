import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// What the transfer itself tells the recorder: the header fields the
/// client added, libcurl's phases or the recorder's own, and whether the
/// body reached everyone decoded.
extension FlowRecorder {
    /// The fields of the request header block libcurl wrote that the app did
    /// not set itself (its request's fields and the session's additional
    /// headers, names compared case-insensitively), in wire order, redacted.
    var clientHeaders: [HTTPHeader]? {
        guard let sentHeaderBlock else { return nil }
        let own = request.headers
        let added = HeaderBlock(sentHeaderBlock).fields.filter { field in
            !own.contains { HTTPHeader.namesMatch($0.name, field.name) }
        }
        return configuration.redacting(added)
    }

    /// `bytes` without leading and trailing spaces and tabs. (Foundation's
    /// `trimmingCharacters(in:)` bridges through `NSString` on every call;
    /// docs/BENCHMARKS.md, "Costs behind the code".)
    static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var bytes = bytes
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        return bytes
    }

    /// libcurl's phases of the (last) transfer, as durations.
    var phases: TransferPhases? {
        let times = transferTimes
        guard let total = times[.total], total > 0 else { return nil }
        let lookup = times[.nameLookup]
        let connected = times[.connect]
        let secured = times[.appConnect].flatMap { $0 > 0 ? $0 : nil }
        let ready = times[.preTransfer]
        let sent = times[.postTransfer].flatMap { $0 > 0 ? $0 : nil }
        let first = times[.startTransfer]
        func between(_ from: Double?, _ to: Double?) -> Double? {
            guard let from, let to else { return nil }
            return to - from
        }
        return TransferPhases(
            blocked: times[.queue].flatMap { $0 > 0 ? $0 : nil },
            dns: lookup,
            connect: between(lookup, connected),
            tls: secured.flatMap { between(connected, $0) },
            send: between(ready, sent),
            wait: between(sent ?? ready, first),
            receive: between(first, total),
            source: "libcurl"
        )
    }

    func measuredPhases(finished: Double) -> TransferPhases? {
        guard let measuredPhasesSource else { return nil }
        let head = firstResponseByte
        return TransferPhases(
            blocked: blockedBeforeStart,
            send: requestSent,
            wait: requestSent.flatMap { sent in head.map { FlowClock.interval(from: sent, to: $0) } },
            receive: head.map { FlowClock.interval(from: $0, to: finished) },
            source: measuredPhasesSource
        )
    }

    /// Whether the client removed the response's content encoding: libcurl
    /// decodes what it advertised (corelibs turns automatic decompression on
    /// for every request), so a body that arrived with `Content-Encoding`
    /// other than `identity` reaches everyone decoded.
    package static func isDecoded(_ response: Response) -> Bool {
        namesACoding(response.headers)
    }

    /// Whether `headers` name a content coding other than `identity`.
    static func namesACoding(_ headers: [HTTPHeader]) -> Bool {
        headers.contains { header in
            guard HTTPHeader.namesMatch(header.name, "content-encoding") else { return false }
            let coding = String(decoding: trimmed(Substring(header.value).utf8), as: UTF8.self).lowercased()
            return !coding.isEmpty && coding != "identity"
        }
    }
}
