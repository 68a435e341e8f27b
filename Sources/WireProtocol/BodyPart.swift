import Foundation

/// Which way a body part or a message went.
public enum StreamDirection: String, Sendable, CaseIterable {
    /// From the client to the server: the request's side.
    case request
    /// From the server to the client: the response's side.
    case response
}

/// Bytes of a flow's body as they went by, with when: what lets a viewer
/// show a streamed response (server-sent events, a long download, an
/// upload) while it is still arriving, instead of once it has ended.
///
/// Only version-2 connections carry parts (docs/PROTOCOL.md §5.6); a
/// version-1 viewer gets the body whole with ``FlowFinished``, as every
/// viewer also does, so a part is a preview that the end makes exact.
///
/// ```swift
/// let part = BodyPart(direction: .response, at: 0.8, offset: 0,
///                     body: CapturedBody(data: Data("data: {\"delta\":\"Hi\"}\n\n".utf8)))
/// log.apply(BodyPartEvent(id: log.id, part: part))   // log.response?.body grows by the part
/// ```
public struct BodyPart: Sendable, Equatable {
    /// Which body: the request's or the response's.
    public var direction: StreamDirection
    /// Seconds from the flow's start (``Timing/startedAt``) until the part
    /// went by, on the agent's monotonic clock (as ``GRPCMessage/at``).
    public var at: Double
    /// The body's true size before this part: where the part starts.
    public var offset: Int
    /// The part: `data` holds the bytes kept (none once the flow's body
    /// capture limit is reached), `size` the part's true size.
    public var body: CapturedBody

    /// Creates a part.
    public init(direction: StreamDirection, at: Double, offset: Int, body: CapturedBody) {
        self.direction = direction
        self.at = at
        self.offset = offset
        self.body = body
    }
}

/// A part of a flow's body went by.
public struct BodyPartEvent: Sendable, Equatable {
    /// The flow the part belongs to.
    public var id: FlowID
    /// The part.
    public var part: BodyPart

    /// Creates the event.
    public init(id: FlowID, part: BodyPart) {
        self.id = id
        self.part = part
    }
}

/// When one part of a body went by and which bytes it was; the bytes
/// themselves are in the body.
public struct BodyPartMark: Sendable, Equatable {
    /// Which body.
    public var direction: StreamDirection
    /// Seconds from the flow's start, as ``BodyPart/at``.
    public var at: Double
    /// The body's true size before the part.
    public var offset: Int
    /// The part's true size.
    public var size: Int

    /// Creates a mark.
    public init(direction: StreamDirection, at: Double, offset: Int, size: Int) {
        self.direction = direction
        self.at = at
        self.offset = offset
        self.size = size
    }

    /// The body's true size once the part had gone by.
    public var end: Int { offset + size }
}

/// The parts a flow's bodies came in, in the order they went by: the
/// timeline behind a growing body (when each server-sent event came, where
/// a download stalled).
///
/// ```swift
/// log.parts?.lastAt                   // seconds from the start to the latest part
/// log.parts?.count(of: .response)     // parts of the response body so far
/// ```
public struct BodyParts: Sendable, Equatable {
    /// One mark per part, both directions, in arrival order.
    public var marks: [BodyPartMark]

    /// Creates the record.
    public init(marks: [BodyPartMark] = []) {
        self.marks = marks
    }

    /// When the latest part went by; nil before any.
    public var lastAt: Double? { marks.last?.at }

    /// How many parts of one direction's body went by.
    public func count(of direction: StreamDirection) -> Int {
        marks.reduce(0) { $0 + ($1.direction == direction ? 1 : 0) }
    }
}

extension NetworkLog {
    /// Folds a body part in: its bytes join the body (which is created at
    /// the first part) and its mark joins ``parts``. A part that does not
    /// start where the body so far ends (one was lost) still counts its
    /// size, and the body is marked truncated: bytes are never placed at
    /// the wrong offset. A response part before the response head is
    /// ignored (there is no response to hold it).
    public mutating func apply(_ event: BodyPartEvent) {
        let part = event.part
        switch part.direction {
        case .request:
            request.body = Self.appending(part, to: request.body)
        case .response:
            guard response != nil else { return }
            response!.body = Self.appending(part, to: response!.body)
        }
        var record = parts ?? BodyParts()
        record.marks.append(BodyPartMark(direction: part.direction, at: part.at, offset: part.offset, size: part.body.size))
        parts = record
    }

    private static func appending(_ part: BodyPart, to body: CapturedBody?) -> CapturedBody {
        var body = body ?? CapturedBody(data: Data())
        let inOrder = part.offset == body.size && !body.isTruncated
        if inOrder { body.data.append(part.body.data) }
        body.size = max(body.size, part.offset) + part.body.size
        body.isTruncated = body.isTruncated || !inOrder || part.body.isTruncated
        body.isDecoded = body.isDecoded || part.body.isDecoded
        return body
    }
}
