// libFuzzer target: the frame decoder and message rules over arbitrary bytes
// cut into arbitrary chunks. Built by Fuzz/run.sh against the
// instrumented WireProtocol module.

@testable import WireProtocol

/// Invariants checked on every input:
/// - no crash, no trap, no unbounded buffering (at most one frame plus its
///   prefix plus one chunk is ever held);
/// - errors are sticky: after the first error, every next() throws again;
/// - every message decoded re-encodes, in version 1 and in version 2, to a
///   frame that decodes to an equal message; frames of both versions are read.
@_cdecl("LLVMFuzzerTestOneInput")
public func frameDecoderFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    guard let first = input.first else { return 0 }
    let chunkSize = Int(first % 64) + 1
    let limit = 4096
    var decoder = MessageDecoder(maximumFrameSize: limit)
    var offset = 1
    var failed = false
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        decoder.append(contentsOf: input[offset..<end])
        offset = end
        precondition(decoder.bufferedByteCount <= limit + Wire.lengthPrefixSize + chunkSize, "decoder buffered too much")
        while true {
            do {
                guard let message = try decoder.next() else { break }
                precondition(!failed, "a message came out after an error")
                var again = MessageDecoder()
                if case .hello = message {} else {
                    again.append(contentsOf: try FrameEncoder().encode(.hello(Hello(agentName: "a", agentVersion: "1", appName: "f", processID: 1, hostName: "h"))))
                    _ = try again.next()
                }
                again.append(contentsOf: try FrameEncoder().encode(message))
                again.append(contentsOf: try FrameEncoder().encode(message, version: 2))
                let reread = try again.next()
                precondition(reread == message, "re-encoding changed the message")
                let rereadVersion2 = try again.next()
                precondition(rereadVersion2 == message, "re-encoding in version 2 changed the message")
            } catch {
                if failed { break }
                failed = true
                do { _ = try decoder.next(); preconditionFailure("error was not sticky") } catch {}
                break
            }
        }
    }
    return 0
}
