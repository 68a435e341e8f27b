/// The part of an OTLP `ExportTraceServiceRequest` that netinspect reads:
/// resources, and their spans with ids, kind, times, attributes and status.
/// Everything else (events, links, scopes, trace state) is skipped on decode.
///
/// ```swift
/// let export = try TraceExport(protobuf: Array(body))
/// for group in export.resourceSpans { print(group.resource["service.name"]?.text ?? "?", group.spans.count) }
/// ```
package struct TraceExport: Sendable, Equatable {
    /// The spans of each resource (each service instance), in request order.
    package var resourceSpans: [ResourceSpans]

    /// Creates an export request's content.
    package init(resourceSpans: [ResourceSpans] = []) {
        self.resourceSpans = resourceSpans
    }

    /// Every span of the request.
    package var spanCount: Int { resourceSpans.reduce(0) { $0 + $1.spans.count } }
}

/// One resource (a service instance) and the spans it sent.
package struct ResourceSpans: Sendable, Equatable {
    /// The resource's attributes: `service.name`, `host.name`, `service.instance.id`…
    package var resource: Attributes
    /// Its spans, whatever instrumentation scope they came from.
    package var spans: [OTLPSpan]

    /// Creates a resource's spans.
    package init(resource: Attributes = Attributes(), spans: [OTLPSpan] = []) {
        self.resource = resource
        self.spans = spans
    }
}

/// One OTLP span, as far as netinspect reads it.
package struct OTLPSpan: Sendable, Equatable {
    /// OTLP's `SpanKind`; values outside the enum are kept as ``unspecified``.
    package enum Kind: Int, Sendable {
        case unspecified = 0, `internal`, server, client, producer, consumer
    }

    /// The 16-byte trace id (as sent: its length is checked when converting).
    package var traceID: [UInt8] = []
    /// The 8-byte span id.
    package var spanID: [UInt8] = []
    /// The parent's span id; empty for a root span.
    package var parentSpanID: [UInt8] = []
    /// The span's name, e.g. `GET /items`.
    package var name = ""
    /// Server (the service received a request), client (it sent one), or another kind.
    package var kind = Kind.unspecified
    /// Nanoseconds since 1970 when it started.
    package var startTimeUnixNano: UInt64 = 0
    /// Nanoseconds since 1970 when it ended.
    package var endTimeUnixNano: UInt64 = 0
    /// The span's attributes, in the order sent.
    package var attributes = Attributes()
    /// OTLP's status code: 0 unset, 1 ok, 2 error.
    package var statusCode = 0
    /// The status's description, usually set with an error.
    package var statusMessage = ""

    /// An empty span.
    package init() {}
}

/// An attribute's value: OTLP's `AnyValue`. Key-value lists are not read
/// (no HTTP convention uses them) and come out as ``other``.
package enum AttributeValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case bytes([UInt8])
    case array([AttributeValue])
    case other

    /// The value as text when it is a string, an integer or a double.
    package var text: String? {
        switch self {
        case .string(let string): string
        case .int(let int): String(int)
        case .double(let double): String(double)
        default: nil
        }
    }

    /// The value as an integer, also from a string of digits (some exporters send those).
    package var integer: Int? {
        switch self {
        case .int(let int): Int(exactly: int)
        case .double(let double): Int(exactly: double)
        case .string(let string): Int(string)
        default: nil
        }
    }

    /// The strings of an array (a header's values), or the one string.
    package var strings: [String] {
        switch self {
        case .array(let values): values.compactMap(\.text)
        default: text.map { [$0] } ?? []
        }
    }
}

/// Attributes in the order sent, looked up by key. Spans carry a few dozen
/// at most, where a linear scan beats hashing.
package struct Attributes: Sendable, Equatable {
    /// The key-value pairs.
    package var pairs: [(key: String, value: AttributeValue)]

    /// Attributes from pairs.
    package init(_ pairs: [(key: String, value: AttributeValue)] = []) { self.pairs = pairs }

    /// The first value under `key`.
    package subscript(key: String) -> AttributeValue? {
        // Most keys differ in length, which a native string knows without
        // reading it: only same-length keys are compared.
        let length = key.utf8.count
        return pairs.first { $0.key.utf8.count == length && $0.key == key }?.value
    }

    /// The first value under any of `keys`, tried in order (new convention first).
    package func first(_ keys: String...) -> AttributeValue? {
        for key in keys { if let value = self[key] { return value } }
        return nil
    }

    package static func == (lhs: Attributes, rhs: Attributes) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }
}

/// Why a request body is not a trace export netinspect can read.
package struct TraceExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, for the sender (it goes into the 400 reply).
    package var description: String

    /// Creates an error.
    package init(_ description: String) { self.description = description }
}
