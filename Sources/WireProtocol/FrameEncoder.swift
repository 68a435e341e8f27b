import Foundation

/// Writes messages as frames: a 4-byte big-endian length, then the JSON
/// payload (layout in ``FrameDecoder``).
///
/// ```swift
/// let encoder = FrameEncoder()
/// socket.write(try encoder.encode(.status(AgentStatus(droppedEvents: 0))))
/// ```
public struct FrameEncoder: @unchecked Sendable {
    // JSONEncoder is a class whose configuration is never mutated after init,
    // and encode(_:) keeps its state per call, so sharing it is safe.
    private let json: JSONEncoder
    /// The largest payload this encoder writes; larger ones throw.
    public let maximumFrameSize: Int

    /// Creates an encoder that refuses payloads above `maximumFrameSize`.
    public init(maximumFrameSize: Int = Wire.defaultMaximumFrameSize) {
        self.json = JSONEncoder()
        self.maximumFrameSize = maximumFrameSize
    }

    /// The JSON payload of `message`, without the length prefix.
    public func payload(_ message: Message) throws -> Data {
        try json.encode(message)
    }

    /// One complete frame for `message`.
    /// - Throws: ``WireError/frameTooLargeToEncode(length:limit:)`` when the
    ///   payload is above ``maximumFrameSize``, or an `EncodingError`.
    public func encode(_ message: Message) throws -> Data {
        let body = try payload(message)
        guard body.count <= maximumFrameSize else {
            throw WireError.frameTooLargeToEncode(length: body.count, limit: maximumFrameSize)
        }
        return Self.frame(payload: body)
    }

    /// Puts the length prefix in front of an already encoded payload.
    public static func frame(payload: Data) -> Data {
        precondition(payload.count <= Int(UInt32.max), "payload does not fit a 32-bit length")
        let length = UInt32(payload.count)
        var frame = Data(capacity: Wire.lengthPrefixSize + payload.count)
        frame.append(UInt8(truncatingIfNeeded: length >> 24))
        frame.append(UInt8(truncatingIfNeeded: length >> 16))
        frame.append(UInt8(truncatingIfNeeded: length >> 8))
        frame.append(UInt8(truncatingIfNeeded: length))
        frame.append(payload)
        return frame
    }
}
