import Foundation
import WireProtocol

/// One line per finished flow, for `netinspect --dump`: time, method,
/// status, URL, response size, duration, and for failures the error. A
/// request the app received has `←` before its method; a call made while
/// handling one ends with `↑` and the first 8 characters of that flow's id
/// (the parent's own line ends with `#` and the same 8, so `grep` pairs them).
/// A gRPC call reads `gRPC` for its method and its status by name, with the
/// status message of a failed call at the end.
///
/// ```
/// 10:32:08.123 GET     200 http://127.0.0.1:8765/api/users?page=2  1.2 KiB  21ms
/// 10:32:09.310 GET     ERR http://127.0.0.1:1/  -  2ms  Could not connect to the server.
/// 10:32:10.002 ←POST   200 http://127.0.0.1:8080/checkout  12 B  40ms  #3F2A09C1
/// 10:32:10.010 GET     200 http://127.0.0.1:9000/inventory/42  2 B  9ms  ↑3F2A09C1
/// 10:32:11.500 gRPC   NOT_FOUND http://127.0.0.1:9000/echo.Echo/Get  -  3ms  no such item
/// ```
public enum DumpFormat {
    /// The line for `log`, times shown in `zone`.
    public static func line(_ log: NetworkLog, in zone: TimeZone) -> String {
        let status = Format.statusLabel(log)
        let marked = (log.isInbound ? Renderer.inboundMarker : "") + Format.method(of: log)
        let method = marked.rightPadded(6)
        let size = Format.responseSize(log) ?? "-"
        let duration = log.timing.duration.map(Format.duration) ?? "-"
        var line = "\(Format.time(log.timing.startedAt, in: zone, milliseconds: true)) \(method) \(status.leftPadded(3)) \(oneLine(log.request.url))  \(size)  \(duration)"
        if let error = log.error, log.state != .completed { line += "  \(oneLine(error.message))" }
        if let status = log.grpc?.status, !status.isOK, let message = status.message, !message.isEmpty {
            line += "  \(oneLine(message))"
        }
        if log.isInbound { line += "  #" + shortID(log.id) }
        if let parentID = log.parentID { line += "  ↑" + shortID(parentID) }
        return line
    }

    /// Enough of an id to pair a call with its parent in one run's output.
    private static func shortID(_ id: FlowID) -> String { String(id.description.prefix(8)) }

    /// Newlines and other control characters in captured text would break
    /// one-flow-per-line output (and could drive the terminal): they become
    /// spaces.
    private static func oneLine(_ text: String) -> String {
        // Such characters are single bytes in UTF-8; most text has none.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// Not `padding(toLength:withPad:startingAt:)`, which bridges to NSString.
    fileprivate func rightPadded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
