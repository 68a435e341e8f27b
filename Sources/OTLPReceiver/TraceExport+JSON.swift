import Foundation

// OTLP/JSON is the protobuf schema's JSON mapping with OTLP's exceptions:
// trace and span ids are hex, not base64; enums are integers. swift-otel
// 1.6.0 writes ids in base64 anyway, so both are read. 64-bit integers come
// as strings, numbers are taken too; unknown keys are ignored.
extension TraceExport {
    /// Decodes an `ExportTraceServiceRequest` in OTLP/JSON.
    /// - Throws: ``TraceExportError`` naming what is malformed.
    package init(json bytes: [UInt8]) throws(TraceExportError) {
        let root: Any
        do {
            // Foundation's parser refuses very deep nesting with an error
            // rather than recursing on (pinned by deeplyNestedJSONIs400).
            root = try JSONSerialization.jsonObject(with: Data(bytes))
        } catch {
            throw TraceExportError("malformed JSON: \(error.localizedDescription)")
        }
        guard let request = root as? [String: Any] else { throw TraceExportError("the JSON body is not an object") }
        self.init()
        for case let group as [String: Any] in try Self.array(request["resourceSpans"], "resourceSpans") {
            var resourceSpans = ResourceSpans()
            if let resource = group["resource"] as? [String: Any] {
                resourceSpans.resource = try Attributes(json: resource["attributes"])
            }
            for case let scope as [String: Any] in try Self.array(group["scopeSpans"], "scopeSpans") {
                for case let span as [String: Any] in try Self.array(scope["spans"], "spans") {
                    resourceSpans.spans.append(try OTLPSpan(json: span))
                }
            }
            self.resourceSpans.append(resourceSpans)
        }
    }

    fileprivate static func array(_ value: Any?, _ name: String) throws(TraceExportError) -> [Any] {
        guard let value else { return [] }
        guard let array = value as? [Any] else { throw TraceExportError("'\(name)' is not an array") }
        return array
    }
}

extension OTLPSpan {
    fileprivate init(json: [String: Any]) throws(TraceExportError) {
        self.init()
        traceID = try Self.id(json["traceId"], "traceId")
        spanID = try Self.id(json["spanId"], "spanId")
        parentSpanID = try Self.id(json["parentSpanId"], "parentSpanId")
        name = json["name"] as? String ?? ""
        if let kind = json["kind"] {
            self.kind = Kind(rawValue: Self.integer(kind) ?? Self.kindNames.firstIndex(of: "\(kind)") ?? 0) ?? .unspecified
        }
        startTimeUnixNano = try Self.nanoseconds(json["startTimeUnixNano"], "startTimeUnixNano")
        endTimeUnixNano = try Self.nanoseconds(json["endTimeUnixNano"], "endTimeUnixNano")
        attributes = try Attributes(json: json["attributes"])
        if let status = json["status"] as? [String: Any] {
            statusCode = status["code"].flatMap(Self.integer) ?? 0
            statusMessage = status["message"] as? String ?? ""
        }
    }

    /// The protobuf enum's names, in value order, for senders that write names.
    private static let kindNames = ["SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
                                    "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"]

    fileprivate static func integer(_ value: Any) -> Int? {
        if let string = value as? String { return Int(string) }
        if let number = value as? NSNumber, !(value is Bool) { return Int(exactly: number.doubleValue) }
        return nil
    }

    private static func nanoseconds(_ value: Any?, _ name: String) throws(TraceExportError) -> UInt64 {
        guard let value else { return 0 }
        if let string = value as? String, let nanos = UInt64(string) { return nanos }
        if let number = value as? NSNumber, let nanos = UInt64(exactly: number.doubleValue.rounded()) { return nanos }
        throw TraceExportError("'\(name)' is not a count of nanoseconds")
    }

    private static func id(_ value: Any?, _ name: String) throws(TraceExportError) -> [UInt8] {
        guard let value else { return [] }
        guard let text = value as? String else { throw TraceExportError("'\(name)' is not a string") }
        if (text.utf8.count == 32 || text.utf8.count == 16), let bytes = hexBytes(text) { return bytes }
        if let data = Data(base64Encoded: text) { return Array(data) }
        throw TraceExportError("'\(name)' is neither hex nor base64")
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            guard let nibble = hexValue(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Attributes {
    fileprivate init(json: Any?) throws(TraceExportError) {
        self.init()
        for case let pair as [String: Any] in try TraceExport.array(json, "attributes") {
            guard let key = pair["key"] as? String else { continue }
            pairs.append((key, AttributeValue(json: pair["value"])))
        }
    }
}

extension AttributeValue {
    fileprivate init(json: Any?) {
        guard let any = json as? [String: Any] else {
            self = .other
            return
        }
        if let string = any["stringValue"] as? String {
            self = .string(string)
        } else if let bool = any["boolValue"] as? Bool {
            self = .bool(bool)
        } else if let int = any["intValue"].flatMap(OTLPSpan.integer) {
            self = .int(Int64(int))
        } else if let double = any["doubleValue"] as? NSNumber {
            self = .double(double.doubleValue)
        } else if let array = any["arrayValue"] as? [String: Any] {
            self = .array((array["values"] as? [Any] ?? []).map { AttributeValue(json: $0) })
        } else if let base64 = any["bytesValue"] as? String, let data = Data(base64Encoded: base64) {
            self = .bytes(Array(data))
        } else {
            self = .other
        }
    }
}
