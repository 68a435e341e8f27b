import Foundation
import WireProtocol

extension FilterExpression {
    /// Whether `log` passes the filter.
    ///
    /// Cheap enough to run over the whole store on every keystroke: nothing is
    /// decoded or allocated unless a regular expression needs a `String`, and
    /// bodies are read only by `~b`.
    public func matches(_ log: NetworkLog) -> Bool {
        switch self {
        case .all:
            return true
        case .method(let method):
            return Self.equalsIgnoringASCIICase(log.request.method, upperCased: method)
        case .statusCode(let code):
            return log.response?.statusCode == code
        case .statusClass(let digit):
            guard let code = log.response?.statusCode else { return false }
            return code / 100 == digit
        case .domain(let pattern):
            return withUTF8(log.request.url) { url in
                pattern.matches(utf8: UnsafeBufferPointer(rebasing: url[Self.hostRange(inURL: url)]))
            }
        case .url(let pattern):
            return pattern.matches(log.request.url)
        case let .header(pattern, side):
            return Self.anyHeader(of: log, side) { Self.headerLine($0, matches: pattern) }
        case let .body(pattern, side):
            return Self.anyBody(of: log, side) { pattern.matches(utf8: $0.data) }
        case .contentType(let pattern):
            if let mime = log.response?.mimeType, pattern.matches(mime) { return true }
            return Self.anyHeader(of: log, .both) {
                $0.name.caseInsensitiveCompare("Content-Type") == .orderedSame && pattern.matches($0.value)
            }
        case .error:
            return log.error != nil || log.state == .failed || log.state == .cancelled
        case .pending:
            return !log.state.isFinal
        case .text(let pattern):
            if pattern.matches(log.request.url) || pattern.matches(log.request.method) { return true }
            guard let code = log.response?.statusCode else { return false }
            return pattern.matches(String(code))
        case .not(let inner):
            return !inner.matches(log)
        case let .and(left, right):
            return left.matches(log) && right.matches(log)
        case let .or(left, right):
            return left.matches(log) || right.matches(log)
        }
    }

    /// Methods are ASCII tokens; comparing bytes spares an `uppercased()` per flow.
    private static func equalsIgnoringASCIICase(_ text: String, upperCased: String) -> Bool {
        text.utf8.elementsEqual(upperCased.utf8) { byte, upper in
            byte == upper || (byte &- UInt8(ascii: "a") < 26 && byte - 0x20 == upper)
        }
    }

    private static func anyHeader(of log: NetworkLog, _ side: FilterMessageSide, _ predicate: (HTTPHeader) -> Bool) -> Bool {
        (side != .response && log.request.headers.contains(where: predicate))
            || (side != .request && log.response?.headers.contains(where: predicate) == true)
    }

    private static func anyBody(of log: NetworkLog, _ side: FilterMessageSide, _ predicate: (CapturedBody) -> Bool) -> Bool {
        (side != .response && log.request.body.map(predicate) == true)
            || (side != .request && log.response?.body.map(predicate) == true)
    }

    /// Matches `Name: value` without building the line as a `String`: its
    /// bytes go to a stack buffer.
    private static func headerLine(_ header: HTTPHeader, matches pattern: FilterPattern) -> Bool {
        let name = header.name.utf8, value = header.value.utf8
        let length = name.count + 2 + value.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            var index = buffer.initialize(fromContentsOf: name)
            index = buffer[index...].initialize(fromContentsOf: ": ".utf8)
            _ = buffer[index...].initialize(fromContentsOf: value)
            defer { buffer.deinitialize() }
            return pattern.matches(utf8: UnsafeBufferPointer(buffer))
        }
    }

    /// The host of an absolute URL: after `scheme://` and any `user@`, up to
    /// the port, path, query or fragment. Brackets of an IPv6 literal are kept.
    static func hostRange(inURL url: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var start = 0
        if let colon = url.firstIndex(of: UInt8(ascii: ":")),
           colon + 2 < url.count, url[colon + 1] == UInt8(ascii: "/"), url[colon + 2] == UInt8(ascii: "/") {
            start = colon + 3
        }
        var end = start
        while end < url.count, !"/?#".utf8.contains(url[end]) { end += 1 }
        if let at = url[start ..< end].lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        if url[start ..< end].first == UInt8(ascii: "[") {
            if let bracket = url[start ..< end].firstIndex(of: UInt8(ascii: "]")) { end = bracket + 1 }
        } else if let colon = url[start ..< end].firstIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        return start ..< end
    }
}
