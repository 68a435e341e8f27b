// libFuzzer target: one frame payload through the fast JSON reader. Built by
// Fuzz/run.sh against the instrumented WireProtocol module.

@testable import WireProtocol

/// Invariants: no crash on any bytes, version-1 JSON or a version-2
/// payload (JSON and body sections); a payload that decodes re-encodes, in
/// either version, to one that decodes to the same message (the writer and
/// reader agree).
@_cdecl("LLVMFuzzerTestOneInput")
public func envelopeFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let payload = UnsafeBufferPointer(start: start, count: count)
    guard let message = try? Message.decode(payload: payload) else { return 0 }
    let again = try? Message.decode(payload: message.wireJSON())
    precondition(again == message, "round trip changed \(message.kind)")
    guard let frame = try? FrameEncoder(maximumFrameSize: Int(UInt32.max)).encode(message, version: 2) else {
        preconditionFailure("version 2 could not encode \(message.kind)")
    }
    let sectioned = try? Message.decode(payload: frame.dropFirst(Wire.lengthPrefixSize))
    precondition(sectioned == message, "version-2 round trip changed \(message.kind)")
    return 0
}
