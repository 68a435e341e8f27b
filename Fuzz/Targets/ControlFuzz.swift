// libFuzzer target: what an agent that accepts control reads from a viewer
// (receipts and traffic rules), then compiles and applies, over arbitrary
// bytes cut into arbitrary chunks. Built by Fuzz/run.sh against the
// instrumented WireProtocol and FlowFilter modules.

@testable import WireProtocol
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private let probe: URLRequest = {
    var request = URLRequest(url: URL(string: "https://api.example.com/v1/items/7?page=2")!)
    request.httpMethod = "POST"
    request.httpBody = Data(#"{"a":1}"#.utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    return request
}()

/// Invariants checked on every input:
/// - no crash, no trap, no unbounded buffering (frames are bounded);
/// - decoded rules re-encode to a frame that decodes to the same rules;
/// - compiling and applying any rules to a request never crashes, and a
///   local answer is a well-formed response.
@_cdecl("LLVMFuzzerTestOneInput")
public func controlFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    guard let first = input.first else { return 0 }
    let chunkSize = Int(first % 64) + 1
    var decoder = ViewerMessageDecoder(maximumFrameSize: 64 * 1024, acceptsRules: true)
    var offset = 1
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        decoder.append(contentsOf: input[offset..<end])
        offset = end
        while true {
            do {
                guard let message = try decoder.next() else { break }
                guard case .rules(let rules) = message else { continue }
                precondition(rules.count <= ViewerMessageDecoder.maximumRules, "too many rules accepted")
                var again = ViewerMessageDecoder(maximumFrameSize: 1 << 24, acceptsRules: true)
                again.append(contentsOf: message.frame())
                let reread = try again.next()
                precondition(reread == message, "re-encoding changed the rules")
                switch RuleSet(compiling: rules).apply(to: probe) {
                case .unchanged, .send:
                    break
                case .answer(let response, let body, _):
                    precondition((100...599).contains(response.statusCode), "bad status")
                    precondition(response.value(forHTTPHeaderField: "Content-Length") == String(body.count), "wrong length")
                }
            } catch {
                // The agent ends the connection at the first error.
                return 0
            }
        }
    }
    return 0
}
