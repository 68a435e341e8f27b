#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Bytes being written by ``JSONWriter``: a pointer, a count and a
/// capacity, grown with `realloc`. An append is a compare and a store.
/// Appending to an `[UInt8]` also asked the runtime whether the array's
/// storage was uniquely referenced, every time, and a payload is a few
/// hundred appends.
///
/// Noncopyable: it owns its memory and frees it when it goes away.
///
/// ```swift
/// var buffer = WriteBuffer(capacity: 512)
/// buffer.append(UInt8(ascii: "{"))
/// buffer.withBytes { socket.send($0) }
/// ```
struct WriteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 512) {
        self.capacity = max(capacity, 16)
        guard let memory = malloc(self.capacity) else { fatalError("WriteBuffer: out of memory") }
        base = memory.assumingMemoryBound(to: UInt8.self)
    }

    deinit { free(base) }

    /// What was written, copied into an array.
    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Calls `body` with what was written.
    func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    subscript(index: Int) -> UInt8 {
        get { base[index] }
        set { base[index] = newValue }
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if capacity - count < bytes.count { grow(toHold: count + bytes.count) }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    mutating func append(_ data: Data) {
        data.withUnsafeBytes { append($0.bindMemory(to: UInt8.self)) }
    }

    mutating func append(repeating byte: UInt8, count extra: Int) {
        if capacity - count < extra { grow(toHold: count + extra) }
        (base + count).initialize(repeating: byte, count: extra)
        count += extra
    }

    /// Adds `extra` bytes for the caller to fill, and returns where they
    /// start; the pointer is good until the next append.
    mutating func appendUninitialized(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < extra { grow(toHold: count + extra) }
        defer { count += extra }
        return base + count
    }

    private mutating func grow(toHold needed: Int) {
        var larger = capacity * 2
        while larger < needed { larger *= 2 }
        guard let memory = realloc(base, larger) else { fatalError("WriteBuffer: out of memory") }
        base = memory.assumingMemoryBound(to: UInt8.self)
        capacity = larger
    }
}
