// libFuzzer target: what an agent that accepts control reads from a viewer
// (receipts, traffic rules, replays, breakpoint answers), then compiles and
// applies, over arbitrary
// bytes cut into arbitrary chunks. Built by Fuzz/run.sh against the
// instrumented WireProtocol and FlowFilter modules.

@testable import WireProtocol
import Foundation

private let probe = ExchangeRequest(
    method: "POST", url: URL(string: "https://api.example.com/v1/items/7?page=2")!,
    headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: Data(#"{"a":1}"#.utf8)
)

private let probeResponse = ExchangeResponse(
    statusCode: 200,
    headers: [HTTPHeader(name: "Content-Type", value: "application/json"), HTTPHeader(name: "Authorization", value: "secret"),
              HTTPHeader(name: "Content-Length", value: "7")],
    body: Data(#"{"a":1}"#.utf8)
)

/// Invariants checked on every input:
/// - no crash, no trap, no unbounded buffering (frames are bounded);
/// - every decoded message re-encodes to a frame that decodes to the same message;
/// - compiling and applying any rules to a request never crashes, and a
///   local answer is a well-formed response;
/// - an intercept filter compiles or is dropped, and never holds anything by itself;
/// - an edited request or response applies without a crash, a redacted
///   value keeps the original, and a response's length fits its body;
/// - a resume or kill for a flow that is not held finds nothing;
/// - any server replay book an agent takes answers the probe, if at all, with a
///   `Content-Length` true of the body it gives.
@_cdecl("LLVMFuzzerTestOneInput")
public func controlFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    guard let first = input.first else { return 0 }
    let chunkSize = Int(first % 64) + 1
    var decoder = ViewerMessageDecoder(maximumFrameSize: 64 * 1024, acceptsRules: true)
    // Answers to flows nobody holds: they must find nothing, whatever they say.
    let breakpoints = Breakpoints(timeout: 60)
    var offset = 1
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        decoder.append(contentsOf: input[offset..<end])
        offset = end
        while true {
            do {
                guard let message = try decoder.next() else { break }
                var again = ViewerMessageDecoder(maximumFrameSize: 1 << 24, acceptsRules: true)
                again.append(contentsOf: message.frame())
                let reread = try again.next()
                precondition(reread == message, "re-encoding changed the message")
                switch message {
                case .receipt, .replay, .useProtocolVersion:
                    continue
                case .intercept(let filter):
                    breakpoints.intercept(filter)
                    precondition(breakpoints.heldCount == 0, "a filter held something by itself")
                    continue
                case .kill(let id):
                    precondition(!breakpoints.decide(id, .kill), "a kill found a flow nobody holds")
                    continue
                case .resume(let resume):
                    precondition(!breakpoints.decide(resume.id, .resume(resume)), "a resume found a flow nobody holds")
                    if let request = resume.request { checkEdit(request) }
                    if let response = resume.response { checkEdit(response) }
                    continue
                case .editedReplay(_, let request), .compose(_, let request):
                    checkEdit(request)
                    continue
                case .serverReplay(let book):
                    // Any book an agent takes answers with a framing true of its body.
                    let store = ServerReplayStore(redactURL: { $0.absoluteString }, redactHeaders: { $0 })
                    store.receive(book)
                    switch store.answer(for: probe) {
                    case .recorded(let response, _, _)?, .notFound(let response, _)?:
                        precondition(response.headers.first("Content-Length") == String(response.body.count), "wrong length")
                    case .kill?, nil:
                        break
                    }
                    continue
                case .rules:
                    break
                }
                guard case .rules(let rules) = message else { continue }
                precondition(rules.count <= ViewerMessageDecoder.maximumRules, "too many rules accepted")
                switch RuleSet(compiling: rules).apply(to: probe) {
                case .unchanged, .send:
                    break
                case .answer(let response, _, _):
                    precondition((100...599).contains(response.statusCode), "bad status")
                    precondition(response.headers.first("Content-Length") == String(response.body.count), "wrong length")
                }
            } catch {
                // The agent ends the connection at the first error.
                return 0
            }
        }
    }
    return 0
}

private func checkEdit(_ edit: WireProtocol.Request) {
    var withSecret = probe
    withSecret.headers.set("Authorization", to: "Bearer s3cret")
    let request = ExchangeControl.applying(edit, to: withSecret, marker: "<redacted>")
    if let marked = edit.headers.last(where: { $0.name.lowercased() == "authorization" }), marked.value == "<redacted>",
       edit.headers.filter({ $0.name.lowercased() == "authorization" }).count == 1 {
        precondition(request.headers.first("Authorization") == "Bearer s3cret", "the marker did not keep the original")
    }
}

private func checkEdit(_ edit: Response) {
    let response = ExchangeControl.applying(edit, to: probeResponse, marker: "<redacted>")
    precondition((100...999).contains(response.statusCode), "bad status")
    if let length = response.headers.first("Content-Length") {
        precondition(length == String(response.body.count), "the length does not fit the body")
    }
}
