import Foundation

/// One block of a `text/event-stream` body, up to the blank line that ends
/// it: an event the browser would dispatch (it has data), or a block that
/// only sets the reconnection time, the last event id, or carries comments,
/// which the spec reads but never dispatches, kept so the view shows them
/// for what they are.
///
/// ```swift
/// var decoder = ServerSentEventDecoder()
/// let events = decoder.feed(Data("event: ping\ndata: {}\n\n".utf8), at: 0.5)
/// events[0].type       // "ping"
/// events[0].data       // "{}"
/// events[0].at         // 0.5: when the part that ended it arrived
/// ```
package struct ServerSentEvent: Sendable, Equatable {
    /// The `event` field; nil reads as the default type, `message`.
    var event: String?
    /// The `data` lines, joined with a line feed.
    var data: String
    /// The `id` field of this block, when it had one.
    package var id: String?
    /// The last event id after this block (ids carry over to later events).
    var lastEventID: String
    /// The `retry` field, in milliseconds, when it was a number.
    var retry: Int?
    /// The comment lines (after their `:`).
    var comments: [String]
    /// Whether a browser would dispatch it: only a block with data is an event.
    var isDispatched: Bool
    /// Where the block starts in the body, and its size with its line ends.
    var offset: Int
    /// The block's size in bytes.
    var size: Int
    /// When the part that completed it arrived (seconds since the flow's
    /// start), when known.
    var at: Double?
    /// Seconds since the previous event, when both times are known.
    var gap: Double?

    /// The event's type as the spec names it.
    var type: String { event ?? "message" }

    /// Whether it is the `[DONE]` sentinel OpenAI-style streams end with.
    var isDone: Bool { isDispatched && data == "[DONE]" }
}

/// An incremental `text/event-stream` parser following the WHATWG
/// EventSource rules: a leading byte order mark is skipped; lines end with
/// CR, LF or CRLF; `:` starts a comment; `field: value` loses one space after
/// the colon; `data` lines join with LF; `id` with a NUL is ignored; `retry`
/// must be all digits; a blank line ends the block; a block the stream ends
/// in the middle of is not dispatched. Bytes come in parts split anywhere
/// (mid-line, between CR and LF, inside a UTF-8 sequence): a line is decoded
/// only once whole, and LF and CR never occur inside a UTF-8 sequence.
struct ServerSentEventDecoder: Sendable {
    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var bomMatched = 0
    private var consumed = 0
    private var blockStart = 0
    private var block = Block()
    private var lastEventID = ""
    private var previousAt: Double?

    private struct Block: Sendable {
        var event: String?
        var data: [String] = []
        var hasData = false
        var id: String?
        var retry: Int?
        var comments: [String] = []
        var hasLines = false
    }

    init() {}

    /// Whether the stream so far ends inside a block or a line: were it to
    /// end now, that block would be lost.
    var isMidEvent: Bool { !line.isEmpty || block.hasLines }

    /// Reads `bytes`, the next part of the body, which arrived `at` seconds
    /// after the flow started; returns the blocks it completed.
    mutating func feed(_ bytes: some Sequence<UInt8>, at: Double?) -> [ServerSentEvent] {
        var completed: [ServerSentEvent] = []
        for byte in bytes {
            consumed += 1
            if atStart, skipsByteOrderMark(byte) { blockStart = consumed; continue }
            if afterCR {
                afterCR = false
                if byte == 0x0A {
                    // The LF of a CRLF whose CR ended the line already.
                    if line.isEmpty && !block.hasLines { blockStart = consumed }
                    continue
                }
            }
            switch byte {
            case 0x0D:
                afterCR = true
                endLine(at: at, into: &completed)
            case 0x0A:
                endLine(at: at, into: &completed)
            default:
                line.append(byte)
            }
        }
        return completed
    }

    /// U+FEFF as UTF-8 is EF BB BF; any other first bytes are the stream's own.
    private mutating func skipsByteOrderMark(_ byte: UInt8) -> Bool {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        if byte == mark[bomMatched] {
            bomMatched += 1
            if bomMatched == mark.count { atStart = false }
            return true
        }
        atStart = false
        // A partial mark was the start of a line after all.
        line.append(contentsOf: mark[0..<bomMatched])
        return false
    }

    private mutating func endLine(at: Double?, into completed: inout [ServerSentEvent]) {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            if block.hasLines { completed.append(dispatch(at: at)) }
            blockStart = consumed
            return
        }
        block.hasLines = true
        let text = String(decoding: line, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return apply(field: text, value: "") }
        if colon == text.startIndex {
            block.comments.append(String(text.dropFirst()).droppingOneLeadingSpace)
            return
        }
        apply(field: String(text[..<colon]), value: String(text[text.index(after: colon)...]).droppingOneLeadingSpace)
    }

    private mutating func apply(field: String, value: String) {
        switch field {
        case "event": block.event = value
        case "data":
            block.data.append(value)
            block.hasData = true
        case "id" where !value.contains("\u{0}"):
            block.id = value
            lastEventID = value
        case "retry" where !value.isEmpty && value.utf8.allSatisfy({ (0x30...0x39).contains($0) }):
            block.retry = Int(value) ?? Int.max
        default: break
        }
    }

    private mutating func dispatch(at: Double?) -> ServerSentEvent {
        var event = ServerSentEvent(
            event: block.event, data: block.data.joined(separator: "\n"), id: block.id, lastEventID: lastEventID,
            retry: block.retry, comments: block.comments, isDispatched: block.hasData,
            offset: blockStart, size: consumed - blockStart, at: at, gap: nil)
        if event.isDispatched {
            if let at, let previousAt { event.gap = at - previousAt }
            if at != nil { previousAt = at }
        }
        block = Block()
        return event
    }
}

extension String {
    fileprivate var droppingOneLeadingSpace: String {
        first == " " ? String(dropFirst()) : self
    }
}
