/// Splits a byte stream into frame payloads. A value-type state machine over
/// bytes: it does no I/O, so any split of the stream may be fed to it.
///
/// Layout of one frame:
///
/// ```
///  0               1               2               3
///  0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
/// +---------------+---------------+---------------+---------------+
/// |        payload length N, unsigned 32-bit, big-endian          |
/// +---------------+---------------+---------------+---------------+
/// |                 N bytes of UTF-8 JSON (one message)          ...
/// +---------------+---------------+---------------+--------------
/// ```
///
/// Frames follow each other with nothing in between. The length is checked
/// against `maximumFrameSize` as soon as its four bytes are in, before any
/// byte of that payload is kept: an oversized or malicious length (say
/// `0xFFFFFFFF`) costs four bytes of memory, not four gigabytes. Frames
/// that arrived complete before a bad length are still handed out, in order;
/// the error comes after them and then every time after that.
///
/// ```swift
/// var decoder = FrameDecoder()
/// decoder.append(chunk)
/// while let payload = try decoder.nextFrame() { handle(payload) }
/// ```
public struct FrameDecoder: Sendable {
    /// The largest payload accepted, in bytes.
    public let maximumFrameSize: Int

    private var buffer: [UInt8] = []
    /// Start of the first frame not yet handed out.
    private var readIndex = 0
    /// End of the complete, length-checked frames: [readIndex, scanIndex)
    /// holds whole frames only.
    private var scanIndex = 0
    /// Set once a length prefix failed its check; the bytes from that
    /// prefix on were dropped.
    private var failure: WireError?

    /// Creates a decoder that rejects payloads above `maximumFrameSize` bytes.
    public init(maximumFrameSize: Int = Wire.defaultMaximumFrameSize) {
        precondition(maximumFrameSize >= 0, "maximumFrameSize must not be negative")
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes held for frames not yet handed out (complete or not).
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes from the stream. Never throws; a bad length prefix is
    /// reported by ``nextFrame()`` once the frames before it are out.
    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        guard failure == nil else { return }
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
        scan()
    }

    /// The next complete payload, `nil` when more bytes are needed.
    /// - Throws: ``WireError/frameTooLarge(length:limit:)`` once every frame
    ///   before the oversized one has been returned.
    public mutating func nextFrame() throws(WireError) -> ArraySlice<UInt8>? {
        guard readIndex < scanIndex else {
            if let failure { throw failure }
            return nil
        }
        let length = Self.length(in: buffer, at: readIndex)
        let start = readIndex + Wire.lengthPrefixSize
        let payload = buffer[start ..< start + length]
        readIndex = start + length
        return payload
    }

    /// Declares the end of the stream.
    /// - Throws: ``WireError/truncatedStream(bufferedBytes:)`` when the bytes
    ///   after the last complete frame do not form a whole frame, or the
    ///   pending ``WireError/frameTooLarge(length:limit:)``.
    public func finish() throws(WireError) {
        if let failure { throw failure }
        let partial = buffer.count - scanIndex
        if partial > 0 { throw .truncatedStream(bufferedBytes: partial) }
    }

    private mutating func scan() {
        while buffer.count - scanIndex >= Wire.lengthPrefixSize {
            let length = Self.length(in: buffer, at: scanIndex)
            guard length <= maximumFrameSize else {
                failure = .frameTooLarge(length: length, limit: maximumFrameSize)
                buffer.removeSubrange(scanIndex...)
                return
            }
            let frameEnd = scanIndex + Wire.lengthPrefixSize + length
            guard frameEnd <= buffer.count else { return }
            scanIndex = frameEnd
        }
    }

    /// Drops the frames handed out. Done before an append, not after a
    /// frame is handed out: the payload slice a caller still holds then
    /// shares the buffer, and compacting under it copied the whole buffer.
    private mutating func compactIfWorthIt() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            readIndex = 0
            scanIndex = 0
        } else if readIndex >= 64 * 1024 && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(..<readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }

    private static func length(in buffer: [UInt8], at index: Int) -> Int {
        Int(buffer[index]) << 24 | Int(buffer[index + 1]) << 16 | Int(buffer[index + 2]) << 8 | Int(buffer[index + 3])
    }
}
