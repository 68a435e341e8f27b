// libFuzzer target: the filter language. Built by Fuzz/run.sh from the
// filter sources against the instrumented WireProtocol module.

import Foundation
import WireProtocol

/// Input: one mode byte, then a pattern and a text separated by a NUL byte.
///
/// Invariants:
/// - parsing any text never crashes; an error's offset lies inside the text;
///   a parsed expression evaluates on flows without crashing;
/// - differential: `FilterPattern`'s byte-level matchers give ICU's answer.
///   A pattern that compiles must match `text` exactly when a plain
///   case-insensitive `NSRegularExpression` finds a match.
@_cdecl("LLVMFuzzerTestOneInput")
public func filterFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    guard let mode = input.first else { return 0 }
    let rest = input.dropFirst()
    let separator = rest.firstIndex(of: 0) ?? rest.endIndex
    let pattern = String(decoding: rest[..<separator], as: UTF8.self)
    let text = separator < rest.endIndex ? String(decoding: rest[rest.index(after: separator)...], as: UTF8.self) : ""

    switch mode % 4 {
    case 0:
        do {
            let expression = try FilterExpression.parse(pattern)
            for flow in sampleFlows(text) { _ = expression.matches(flow) }
        } catch {
            precondition((0...pattern.count).contains(error.offset), "offset \(error.offset) outside '\(pattern)'")
        }
    case 1:
        guard pattern.utf8.count <= 40, text.utf8.count <= 300,
              let reference = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]),
              let compiled = try? FilterPattern(regularExpression: pattern) else { return 0 }
        let expected = reference.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        precondition(compiled.matches(text) == expected, "regex '\(pattern)' on '\(text)': ours \(!expected), ICU \(expected)")
        let bytes = Array(text.utf8)
        let byBytes = bytes.withUnsafeBufferPointer { compiled.matches(utf8: $0) }
        precondition(byBytes == expected, "regex '\(pattern)' on bytes of '\(text)': ours \(!expected), ICU \(expected)")
    case 3:
        // Header matching without building the line must agree with ICU on
        // "name: value". The text is split at its first NUL into name and value.
        let parts = text.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
        guard pattern.utf8.count <= 40, text.utf8.count <= 300, parts.count == 2,
              let reference = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]),
              let compiled = try? FilterPattern(regularExpression: pattern) else { return 0 }
        let (name, value) = (String(parts[0]), String(parts[1]))
        let line = name + ": " + value
        let expected = reference.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
        let flow = NetworkLog(request: Request(method: "GET", url: "http://h/", headers: [HTTPHeader(name: name, value: value)]),
                              timing: Timing(startedAt: Date(timeIntervalSince1970: 0)))
        let ours = FilterExpression.header(compiled, in: .both).matches(flow)
        precondition(ours == expected, "header regex '\(pattern)' on '\(line)': ours \(ours), ICU \(expected)")
    default:
        guard text.utf8.count <= 300 else { return 0 }
        let literal = FilterPattern(literal: pattern)
        // ICU refuses an empty pattern; the empty string is in every text.
        let expected = pattern.isEmpty || (try! NSRegularExpression(
            pattern: NSRegularExpression.escapedPattern(for: pattern), options: [.caseInsensitive]
        )).firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        precondition(literal.matches(text) == expected, "literal '\(pattern)' in '\(text)': ours \(!expected), ICU \(expected)")
    }
    return 0
}

private func sampleFlows(_ text: String) -> [NetworkLog] {
    let timing = Timing(startedAt: Date(timeIntervalSince1970: 0), requestSent: 0.001, firstResponseByte: 0.002, finished: 0.003)
    return [
        NetworkLog(request: Request(method: "GET", url: "http://h/\(text)", headers: [HTTPHeader(name: text, value: text)]),
                   timing: Timing(startedAt: Date(timeIntervalSince1970: 0))),
        NetworkLog(request: Request(method: text, url: text, body: CapturedBody(data: Data(text.utf8))),
                   response: Response(statusCode: 503, headers: [HTTPHeader(name: "Content-Type", value: text)],
                                      body: CapturedBody(data: Data(text.utf8)), mimeType: text),
                   timing: timing, error: FlowError(domain: "d", code: 1, message: text), state: .failed),
    ]
}
