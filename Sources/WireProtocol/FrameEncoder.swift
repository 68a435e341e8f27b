import Foundation

/// Writes messages as frames: a 4-byte big-endian length, then the JSON
/// payload (layout in ``FrameDecoder``).
///
/// ```swift
/// let encoder = FrameEncoder()
/// socket.write(try encoder.encode(.status(AgentStatus(droppedEvents: 0))))
/// ```
public struct FrameEncoder: Sendable {
    /// The largest payload this encoder writes; larger ones throw.
    public let maximumFrameSize: Int

    /// Creates an encoder that refuses payloads above `maximumFrameSize`.
    public init(maximumFrameSize: Int = Wire.defaultMaximumFrameSize) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// The JSON payload of `message`, without the length prefix.
    public func payload(_ message: Message) -> Data {
        message.payload()
    }

    /// One complete frame for `message`.
    /// - Throws: ``WireError/frameTooLargeToEncode(length:limit:)`` when the
    ///   payload is above ``maximumFrameSize``.
    public func encode(_ message: Message) throws(WireError) -> Data {
        let body = message.wireJSON()
        guard body.count <= maximumFrameSize else {
            throw .frameTooLargeToEncode(length: body.count, limit: maximumFrameSize)
        }
        var frame = Data(capacity: Wire.lengthPrefixSize + body.count)
        frame.append(contentsOf: Self.lengthPrefix(body.count))
        frame.append(contentsOf: body)
        return frame
    }

    /// Puts the length prefix in front of an already encoded payload.
    public static func frame(payload: Data) -> Data {
        precondition(payload.count <= Int(UInt32.max), "payload does not fit a 32-bit length")
        var frame = Data(capacity: Wire.lengthPrefixSize + payload.count)
        frame.append(contentsOf: lengthPrefix(payload.count))
        frame.append(payload)
        return frame
    }

    private static func lengthPrefix(_ count: Int) -> [UInt8] {
        let length = UInt32(count)
        return [UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
    }
}
