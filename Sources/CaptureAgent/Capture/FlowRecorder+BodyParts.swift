import Foundation
import WireProtocol

/// The `bodyPart` events a body makes as its bytes go by, and the one rule
/// that says which bytes make one (docs/PROTOCOL.md §3.11).
///
/// Every piece of a body the adapter reports makes a part, except:
/// - the piece that completes a response body whose length was declared
///   (`Content-Length`, and not changed by a content coding the client
///   removed): the flow's end follows at once and carries the whole body,
///   so the part would only cost a frame (a quick response, read in one
///   piece, makes no part at all). A request's last piece is a part like
///   any other: the answer may take long (an MCP tool call that streams
///   its progress), and the viewer names the call from the request body
///   (a quick flow folds the part into its start, ``PendingQueue``);
/// - a body handed over whole (a request body known before sending, or one
///   read ahead to hold it): ``FlowRecording`` never reports it in pieces.
/// A part is made as its bytes pass, never held back for the next one.
extension FlowRecorder {
    /// The part for `bytes` of the `direction` body, which had `offset` bytes
    /// before them (they are already counted in the body, or about to be),
    /// or nil when the rule above leaves them to the flow's end. Keeps the
    /// part's bytes that fall within the body capture limit (none once the
    /// body has reached it); the part's size is always its true size.
    func bodyPart(_ direction: StreamDirection, bytes: UnsafeRawBufferPointer, offset: Int) -> Message? {
        guard !bytes.isEmpty else { return nil }
        if direction == .response, let declared = declaredResponseLength, offset + bytes.count >= declared { return nil }
        let kept = max(0, min(bytes.count, configuration.bodyCaptureLimit - offset))
        return part(direction, offset: offset, kept: kept > 0 ? Data(bytes.prefix(kept)) : Data(), size: bytes.count)
    }

    /// One part for the first `offset` bytes of `body` (what went by before
    /// the flow began sending parts, ``FlowRecording``), stamped now: a
    /// viewer that took up the stream mid-body gets it whole from its
    /// first byte rather than past a gap. Nil when nothing went by.
    func catchUpPart(_ direction: StreamDirection, body: BodyCapture, upTo offset: Int) -> Message? {
        guard offset > 0 else { return nil }
        return part(direction, offset: 0, kept: Data(body.prefix.prefix(min(offset, configuration.bodyCaptureLimit))), size: offset)
    }

    /// A part of `size` bytes at `offset`, `kept` of them within the capture limit, stamped now.
    private func part(_ direction: StreamDirection, offset: Int, kept: Data, size: Int) -> Message {
        var body = CapturedBody(data: kept, size: size, isTruncated: kept.count < size)
        if direction == .response, let framing = responseFraming, responseBodyIsDecoded ?? framing.isCoded { body.isDecoded = true }
        return .bodyPart(BodyPartEvent(id: id, part: BodyPart(direction: direction, at: elapsed, offset: offset, body: body)))
    }

    /// The response body length the headers declare, when the bytes
    /// reported are those the headers count: not when the client removed
    /// the content coding (the bytes reported are then more than it counts).
    private var declaredResponseLength: Int? {
        guard let framing = responseFraming else { return nil }
        if framing.isCoded, responseBodyIsDecoded ?? true { return nil }
        return framing.contentLength
    }
}

/// What a response head says of its body: its declared length, and whether
/// a content coding was applied to it (``FlowRecorder/isDecoded(_:)``).
struct ResponseFraming {
    var contentLength: Int?
    var isCoded: Bool

    init(_ headers: [HTTPHeader]) {
        contentLength = headers.first("Content-Length").flatMap { Int(String(decoding: FlowRecorder.trimmed(Substring($0).utf8), as: UTF8.self)) }
        isCoded = FlowRecorder.namesACoding(headers)
    }
}
