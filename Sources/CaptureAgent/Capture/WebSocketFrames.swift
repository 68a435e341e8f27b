import Foundation
import WireProtocol

/// What the frames of one WebSocket connection add up to, in both
/// directions: each complete message (a text or binary message's fragments
/// joined), each ping, pong and close, and whether the close handshake went
/// both ways. Pure value code with no I/O, owned by whatever sees the
/// connection's frames in order (a channel handler on its event loop).
///
/// Frames are read, never kept: a message keeps at most `limit` bytes of
/// its payload (its true size always counted), so a large or endless
/// fragmented message costs the agent no more than its capture limit.
///
/// ```swift
/// var frames = WebSocketFrames(limit: 4096)
/// let first = frames.frame(.request, opcode: 0x1, fin: false, payload: part1)   // nil: the message goes on
/// let message = frames.frame(.request, opcode: 0x0, fin: true, payload: part2)  // the whole text message
/// ```
package struct WebSocketFrames {
    /// One message as the log records it.
    package struct Complete: Equatable {
        package var opcode: WebSocketOpcode
        /// The payload (a close frame's: its reason), kept up to the limit.
        package var body: CapturedBody
        /// A close frame's status code; nil for other frames and a close without one.
        package var closeCode: Int?
    }

    /// A text or binary message whose final fragment has not come yet.
    private struct Partial {
        var opcode: WebSocketOpcode
        var kept = Data()
        var size = 0
    }

    /// The most bytes of one message's payload kept.
    package let limit: Int
    private var partial: [StreamDirection: Partial] = [:]
    private var closes: Set<StreamDirection> = []

    package init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Whether a close frame went each way: the connection closed cleanly.
    package var closedBothWays: Bool { closes.count == 2 }

    /// How many payload bytes of a frame going `direction` are worth
    /// reading: what the message it belongs to can still keep.
    package func wanted(_ direction: StreamDirection, opcode: UInt8) -> Int {
        // A close frame's status code is read whatever the limit.
        if opcode == 0x8 { return limit + 2 }
        guard opcode == 0, let message = partial[direction] else { return limit }
        return max(0, limit - message.kept.count)
    }

    /// One frame going `direction` (RFC 6455 opcode, FIN bit) whose payload
    /// is `size` bytes, of which `payload` holds the first ones (unmasked),
    /// up to ``wanted(_:opcode:)``. Returns the message it completes, if any;
    /// reserved opcodes and a continuation with no message begun complete nothing.
    package mutating func frame(_ direction: StreamDirection, opcode: UInt8, fin: Bool, size: Int,
                                payload: UnsafeRawBufferPointer) -> Complete? {
        switch opcode {
        case 0x1, 0x2:
            // A new message replaces a partial one the peer never finished
            // (a protocol error the framework answers; the log keeps the new one).
            partial[direction] = Partial(opcode: opcode == 0x1 ? .text : .binary)
            return append(direction, fin: fin, size: size, payload: payload)
        case 0x0:
            guard partial[direction] != nil else { return nil }
            return append(direction, fin: fin, size: size, payload: payload)
        case 0x8:
            closes.insert(direction)
            return close(size: size, payload: payload)
        case 0x9, 0xA:
            return Complete(opcode: opcode == 0x9 ? .ping : .pong, body: body(payload, size: size), closeCode: nil)
        default:
            return nil
        }
    }

    private mutating func append(_ direction: StreamDirection, fin: Bool, size: Int, payload: UnsafeRawBufferPointer) -> Complete? {
        guard var message = partial.removeValue(forKey: direction) else { return nil }
        message.kept.append(contentsOf: payload.prefix(max(0, limit - message.kept.count)))
        message.size += size
        guard fin else {
            partial[direction] = message
            return nil
        }
        return Complete(opcode: message.opcode,
                        body: CapturedBody(data: message.kept, size: message.size, isTruncated: message.size > message.kept.count),
                        closeCode: nil)
    }

    /// A close frame's payload is a two-byte status code (network order)
    /// and a UTF-8 reason; the log keeps the code apart and the reason as the body.
    private func close(size: Int, payload: UnsafeRawBufferPointer) -> Complete {
        guard size >= 2, payload.count >= 2 else {
            return Complete(opcode: .close, body: CapturedBody(data: Data(), size: 0), closeCode: nil)
        }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        let reason = UnsafeRawBufferPointer(rebasing: payload[2...])
        return Complete(opcode: .close, body: body(reason, size: size - 2), closeCode: code)
    }

    private func body(_ payload: UnsafeRawBufferPointer, size: Int) -> CapturedBody {
        let kept = Data(payload.prefix(limit))
        return CapturedBody(data: kept, size: size, isTruncated: size > kept.count)
    }
}
