// libFuzzer target: the OTLP span decoder (protobuf and JSON) and the span
// to flow conversion over arbitrary bytes. Built by Fuzz/run.sh from the
// receiver's decoder sources against the instrumented ProtobufWire and
// WireProtocol modules.

import Foundation
import ProtobufWire

/// Invariants checked on every input (its first byte picks the encoding):
/// - no crash, no trap, no unbounded recursion, whatever the bytes;
/// - a decoded protobuf export, encoded again, decodes to the same bytes
///   once more (encoding is a fixed point after one round);
/// - every span converts to a flow or to nothing without trapping.
@_cdecl("LLVMFuzzerTestOneInput")
public func spanFuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: start, count: count))
    guard let mode = input.first else { return 0 }
    let body = Array(input.dropFirst())
    let export: TraceExport
    do {
        export = mode.isMultiple(of: 2) ? try TraceExport(protobuf: body) : try TraceExport(json: body)
    } catch {
        return 0
    }
    let encoded = export.protobufBytes()
    guard let again = try? TraceExport(protobuf: encoded) else { preconditionFailure("our own encoding does not decode") }
    precondition(again.protobufBytes() == encoded, "encoding is not a fixed point")
    for group in export.resourceSpans {
        for span in group.spans where SpanFlow.hasValidIDs(span) {
            _ = SpanFlow.log(for: span, parent: SpanFlow.flowID(trace: span.traceID, span: span.parentSpanID))
        }
    }
    return 0
}
