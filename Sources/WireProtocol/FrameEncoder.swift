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

    /// One complete frame for `message`, in protocol `version` (1 or 2).
    /// - Throws: ``WireError/frameTooLargeToEncode(length:limit:)`` when the
    ///   payload is above ``maximumFrameSize``.
    public func encode(_ message: Message, version: Int = 1) throws(WireError) -> Data {
        var frame: [UInt8] = []
        frame.reserveCapacity(512)
        try encode(message, version: version, appendingTo: &frame)
        return Data(frame)
    }

    /// Appends the frame for `message` to `buffer`, written in place: a
    /// writer that keeps one buffer for all its frames (and sends several at
    /// once) allocates nothing per frame once the buffer has grown.
    ///
    /// `version` 2 writes bodies as raw bytes after the JSON
    /// (``SectionedPayload``); send it only to a viewer that asked for it.
    ///
    /// ```swift
    /// var batch: [UInt8] = []
    /// for message in messages { try encoder.encode(message, version: 2, appendingTo: &batch) }
    /// try socket.send(batch)
    /// batch.removeAll(keepingCapacity: true)
    /// ```
    /// - Throws: ``WireError/frameTooLargeToEncode(length:limit:)`` when the
    ///   payload is above ``maximumFrameSize``; `buffer` is then as it was.
    public func encode(_ message: Message, version: Int = 1, appendingTo buffer: inout [UInt8]) throws(WireError) {
        // The JSON is written into the writer's own buffer, then copied into
        // `buffer` once, and a version-2 frame's bodies go straight after
        // it: appending to an array costs a uniqueness check per append,
        // and a frame is a few hundred of them.
        var writer = JSONWriter()
        writer.output.append(repeating: 0, count: Wire.lengthPrefixSize)
        var sections: [Data] = []
        if version >= 2 {
            let payloadStart = writer.beginSectionedPayload()
            message.write(to: &writer)
            sections = writer.endSectionedJSON(startedAt: payloadStart)
        } else {
            message.write(to: &writer)
        }
        let length = writer.output.count - Wire.lengthPrefixSize + SectionedPayload.size(of: sections)
        guard length <= maximumFrameSize else { throw .frameTooLargeToEncode(length: length, limit: maximumFrameSize) }
        writer.putLength(length, at: 0)
        writer.output.withBytes { buffer.append(contentsOf: $0) }
        SectionedPayload.append(sections, to: &buffer)
    }

    /// Puts the length prefix in front of an already encoded payload.
    public static func frame(payload: Data) -> Data {
        precondition(payload.count <= Int(UInt32.max), "payload does not fit a 32-bit length")
        var frame = Data(capacity: Wire.lengthPrefixSize + payload.count)
        frame.append(contentsOf: lengthPrefix(payload.count))
        frame.append(payload)
        return frame
    }

    /// `count` as the 4-byte big-endian length that starts a frame or a section.
    static func lengthPrefix(_ count: Int) -> [UInt8] {
        let length = UInt32(count)
        return [UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
    }
}
