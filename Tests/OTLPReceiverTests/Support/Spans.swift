import OTLPReceiver

/// Spans for tests: ids from small numbers, so a test names them readably.
enum Spans {
    static func trace(_ number: UInt8) -> [UInt8] { [UInt8](repeating: 0, count: 15) + [number] }
    static func id(_ number: UInt8) -> [UInt8] { [UInt8](repeating: 0, count: 7) + [number] }

    static func span(trace: UInt8 = 1, id: UInt8, parent: UInt8? = nil, kind: OTLPSpan.Kind, http: Bool = true) -> OTLPSpan {
        var span = OTLPSpan()
        span.traceID = Self.trace(trace)
        span.spanID = Self.id(id)
        span.parentSpanID = parent.map(Self.id) ?? []
        span.kind = kind
        span.name = "span \(id)"
        span.startTimeUnixNano = 1_700_000_000_000_000_000
        span.endTimeUnixNano = 1_700_000_000_250_000_000
        if http {
            span.attributes = Attributes([
                ("http.request.method", .string("GET")),
                ("url.full", .string("http://svc.local/\(id)")),
                ("http.response.status_code", .int(200)),
            ])
        }
        return span
    }

    static func export(_ spans: [OTLPSpan], service: String = "svc") -> TraceExport {
        TraceExport(resourceSpans: [ResourceSpans(resource: Attributes([("service.name", .string(service))]), spans: spans)])
    }
}
