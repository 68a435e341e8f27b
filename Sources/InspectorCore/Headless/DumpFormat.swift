import Foundation
import WireProtocol

/// One line per finished flow, for `netinspect --dump`: time, method,
/// status, URL, response size, duration, and for failures the error. A
/// request the app received has `←` before its method; a call made while
/// handling one ends with `↑` and the first 8 characters of that flow's id
/// (the parent's own line ends with `#` and the same 8, so `grep` pairs them).
/// A call that recorded its local address shows its id after `#` too, and
/// a captured service's request made by such a call names it after `↑`
/// (or the call names the request after `↓`; ``DumpLinks``). With more
/// than one app connected, the app's name follows the time.
/// A gRPC call reads `gRPC` for its method and its status by name, with the
/// status message of a failed call at the end.
///
/// ```
/// 10:32:08.123 GET     200 http://127.0.0.1:8765/api/users?page=2  1.2 KiB  21ms
/// 10:32:09.310 GET     ERR http://127.0.0.1:1/  -  2ms  Could not connect to the server.
/// 10:32:10.002 ←POST   200 http://127.0.0.1:8080/checkout  12 B  40ms  #3F2A09C1
/// 10:32:10.010 GET     200 http://127.0.0.1:9000/inventory/42  2 B  9ms  ↑3F2A09C1
/// 10:32:11.500 gRPC   NOT_FOUND http://127.0.0.1:9000/echo.Echo/Get  -  3ms  no such item
/// 10:32:12.100 shop GET     200 http://127.0.0.1:9000/stock  2 B  4ms  #5D0C4E7A  ↑3F2A09C1
/// 10:32:12.102 stock ←GET   200 http://127.0.0.1:9000/stock  2 B  1ms  #81B2F003  ↑5D0C4E7A
/// 10:32:13.000 GET     200 http://127.0.0.1:9000/stock  2 B  0ms  ≈server replay
/// 10:32:13.010 GET     404 http://127.0.0.1:9000/other  61 B  0ms  ≈server replay: 404
/// ```
package enum DumpFormat {
    /// How a line shows that a captured call made a captured service's
    /// inbound flow (``DumpLinks`` decides which).
    package enum Link: Sendable, Equatable {
        /// On the inbound flow's line: `↑` and the call's id.
        case madeBy(FlowID)
        /// On the call's line: `↓` and the id of the inbound flow it made,
        /// whose line was written before the call was known.
        case answeredBy(FlowID)
    }

    /// The line for `log`, times shown in `zone`; `app` names the app it
    /// came from, `link` its link to another service's flow.
    static func line(_ log: NetworkLog, in zone: TimeZone, app: String? = nil, link: Link? = nil) -> String {
        var bytes: [UInt8] = []
        append(log, in: zone, app: app, link: link, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the line for `log` (without a newline) to `output`, as UTF-8.
    /// Written as bytes: a String appended to piece by piece checks and
    /// grows itself for every piece (docs/BENCHMARKS.md, "Costs behind the code"),
    /// and `--dump` writes bytes anyway.
    package static func append(_ log: NetworkLog, in zone: TimeZone, app: String? = nil, link: Link? = nil,
                              to output: inout [UInt8]) {
        func add(_ text: String) {
            var text = text
            text.withUTF8 { output.append(contentsOf: $0) }
        }
        func add(_ text: String, paddedTo width: Int, leading: Bool) {
            let padding = max(0, width - text.count)
            if leading { output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: padding)) }
            add(text)
            if !leading { output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: padding)) }
        }
        // Newlines and other control characters in captured text would break
        // one-flow-per-line output (and could drive the terminal): they
        // become spaces. They are single bytes in UTF-8, and no byte of a
        // longer character is below 0x80.
        func addOneLine(_ text: String) {
            func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }
            var text = text
            text.withUTF8 { bytes in
                guard bytes.contains(where: isControl) else { return output.append(contentsOf: bytes) }
                output.append(contentsOf: bytes.lazy.map { isControl($0) ? UInt8(ascii: " ") : $0 })
            }
        }
        add(Format.time(log.timing.startedAt, in: zone, milliseconds: true))
        output.append(UInt8(ascii: " "))
        if let app {
            addOneLine(app)
            output.append(UInt8(ascii: " "))
        }
        add((log.isInbound ? Renderer.inboundMarker : "") + Format.method(of: log), paddedTo: 6, leading: false)
        output.append(UInt8(ascii: " "))
        add(Format.statusLabel(log), paddedTo: 3, leading: true)
        output.append(UInt8(ascii: " "))
        addOneLine(log.request.url)
        add("  ")
        add(Format.responseSize(log) ?? "-")
        add("  ")
        add(log.timing.duration.map(Format.duration) ?? "-")
        if let error = log.error, log.state != .completed { add("  "); addOneLine(error.message) }
        if let status = log.grpc?.status, !status.isOK, let message = status.message, !message.isEmpty {
            add("  ")
            addOneLine(message)
        }
        // A call with its local address may have been received by a captured
        // service, whose line names it whenever the call was known first.
        if log.isInbound || log.localAddress != nil { add("  #"); add(shortID(log.id)) }
        if let parentID = log.parentID { add("  ↑"); add(shortID(parentID)) }
        if let replay = log.changes?.serverReplay {
            add("  "); add(Renderer.serverReplayMarker); add(replay.extra.map { "server replay: \($0)" } ?? "server replay")
        }
        switch link {
        case .madeBy(let call): add("  ↑"); add(shortID(call))
        case .answeredBy(let inbound): add("  ↓"); add(shortID(inbound))
        case nil: break
        }
    }

    /// Enough of an id to pair a call with its parent in one run's output.
    /// The first 8 characters of a flow's id: enough for `~id` and to pair lines.
    static func shortID(_ id: FlowID) -> String { String(id.description.prefix(8)) }
}
