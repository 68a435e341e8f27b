import Foundation
import WireProtocol

/// Keeps the first `limit` bytes of a body that arrives in pieces and counts
/// all of them.
package struct BodyCapture {
    package let limit: Int
    package private(set) var prefix = Data()
    package private(set) var size = 0

    package init(limit: Int) {
        self.limit = max(0, limit)
    }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        size += bytes.count
        let room = limit - prefix.count
        if room > 0 { prefix.append(contentsOf: bytes.prefix(room)) }
    }

    /// Bytes that went by unread (a file the kernel sent): counted, not kept.
    package mutating func skip(_ count: Int) {
        size += max(0, count)
    }

    package mutating func append(_ data: Data) {
        data.withUnsafeBytes { append($0) }
    }

    package var captured: CapturedBody {
        CapturedBody(data: prefix, size: size, isTruncated: size > prefix.count)
    }

    /// The first `limit` bytes of the file at `url` and its size, without
    /// reading the rest of it.
    static func capturing(_ handle: FileHandle, limit: Int) -> CapturedBody? {
        let prefix: Data
        let size: UInt64
        do {
            prefix = try handle.read(upToCount: max(0, limit)) ?? Data()
            size = try handle.seekToEnd()
        } catch { return nil }
        let total = max(Int(clamping: size), prefix.count)
        return CapturedBody(data: prefix, size: total, isTruncated: total > prefix.count)
    }

    static func capturing(fileAt url: URL, limit: Int) -> CapturedBody? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        let prefix: Data
        do { prefix = try handle.read(upToCount: max(0, limit)) ?? Data() } catch { return nil }
        return CapturedBody(data: prefix, size: max(size, prefix.count), isTruncated: size > prefix.count)
    }
}

/// An input stream that forwards another one and keeps a capped copy of
/// what was read. The app's `httpBodyStream` can be read only once, so the
/// inner request reads it through this, and the log gets what was sent.
final class TeeInputStream: InputStream {
    private let source: InputStream
    private let capture: Locked<BodyCapture>

    init(source: InputStream, limit: Int) {
        self.source = source
        self.capture = Locked(BodyCapture(limit: limit))
        super.init(data: Data())
    }

    /// The bytes read so far (capped) and their count.
    package var captured: CapturedBody { capture.current.captured }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        let count = source.read(buffer, maxLength: length)
        if count > 0 {
            capture.withLock { $0.append(UnsafeRawBufferPointer(start: buffer, count: count)) }
        }
        return count
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    override var hasBytesAvailable: Bool { source.hasBytesAvailable }
    override func open() { source.open() }
    override func close() { source.close() }
    override var streamStatus: Stream.Status { source.streamStatus }
    override var streamError: Error? { source.streamError }
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { source.property(forKey: key) }
    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool {
        source.setProperty(property, forKey: key)
    }
}
