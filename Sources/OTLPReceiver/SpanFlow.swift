import Foundation
import WireProtocol

/// Turns an HTTP span into the ``NetworkLog`` an agent would have sent for
/// the same exchange, reading the HTTP semantic conventions: the stable ones
/// (`http.request.method`, `url.full`, `http.response.status_code`…) first,
/// the older ones (`http.method`, `http.url`, `http.status_code`…) when those
/// are absent.
///
/// ```swift
/// if let log = SpanFlow.log(for: span, parent: ancestry.serverAncestor(of: span)) { … }
/// ```
package enum SpanFlow {
    /// What ``NetworkLog/source`` says about flows that came in as spans.
    package static let source = CaptureSource(client: CaptureSource.Client(rawValue: "OpenTelemetry"))

    /// Whether a span has ids of the lengths OTLP requires (16 and 8 bytes,
    /// not all zero); the others are rejected, as the spec asks.
    package static func hasValidIDs(_ span: OTLPSpan) -> Bool {
        span.traceID.count == 16 && span.spanID.count == 8
            && span.traceID.contains { $0 != 0 } && span.spanID.contains { $0 != 0 }
            && (span.parentSpanID.isEmpty || span.parentSpanID.count == 8)
    }

    /// The flow id of a span: the same for every copy of the span (a
    /// retried export replaces the flow rather than adding one), and
    /// computable from a child's `parentSpanID` before the parent arrives.
    package static func flowID(trace: [UInt8], span: [UInt8]) -> FlowID {
        // Written in place: an id is made several times a span (its flow,
        // its parent, the ancestry), and an array for it cost a heap block.
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for index in 0..<min(16, trace.count) { bytes[index] = trace[index] }
            guard !span.isEmpty else { return }
            for index in 0..<16 { bytes[index] ^= span[index % span.count] }
        }
        return FlowID(UUID(uuid: uuid))
    }

    /// Whether the span is an HTTP exchange netinspect shows: kind server or
    /// client, with a request method.
    package static func isHTTP(_ span: OTLPSpan) -> Bool {
        (span.kind == .server || span.kind == .client) && method(span.attributes) != nil
    }

    /// The flow for an HTTP span; nil for any other span.
    /// - Parameter parent: the inbound flow the span was made under (client spans only).
    package static func log(for span: OTLPSpan, parent: FlowID?) -> NetworkLog? {
        guard isHTTP(span), let method = method(span.attributes) else { return nil }
        let attributes = span.attributes
        let inbound = span.kind == .server
        let statusCode = attributes.first("http.response.status_code", "http.status_code")?.integer
        let response = statusCode.map {
            Response(statusCode: $0, headers: headers(attributes, prefix: "http.response.header."),
                     body: body(attributes, content: "http.response.body.content",
                                sizes: "http.response.body.size", "http.response_content_length"))
        }
        let error = error(span, hasResponse: response != nil)
        let duration = Double(span.endTimeUnixNano &- span.startTimeUnixNano) / 1e9
        return NetworkLog(
            id: flowID(trace: span.traceID, span: span.spanID),
            request: Request(
                method: method,
                url: url(attributes, inbound: inbound),
                headers: headers(attributes, prefix: "http.request.header."),
                body: body(attributes, content: "http.request.body.content",
                           sizes: "http.request.body.size", "http.request_content_length")
            ),
            response: response,
            timing: Timing(startedAt: Date(timeIntervalSince1970: Double(span.startTimeUnixNano) / 1e9),
                           finished: span.endTimeUnixNano >= span.startTimeUnixNano ? duration : nil),
            error: error,
            state: error == nil ? .completed : .failed,
            source: source,
            direction: inbound ? .inbound : nil,
            parentID: inbound ? nil : parent
        )
    }

    private static func method(_ attributes: Attributes) -> String? {
        guard let method = attributes.first("http.request.method", "http.method")?.text, !method.isEmpty else { return nil }
        // The stable convention writes _OTHER for methods it does not know.
        if method == "_OTHER", let original = attributes["http.request.method_original"]?.text { return original }
        return method
    }

    private static func url(_ attributes: Attributes, inbound: Bool) -> String {
        if let full = attributes.first("url.full", "http.url")?.text { return full }
        let scheme = attributes.first("url.scheme", "http.scheme")?.text ?? "http"
        var host = inbound
            ? attributes.first("server.address", "http.host", "net.host.name", "http.server_name")?.text
            : attributes.first("server.address", "net.peer.name", "http.host")?.text
        let port = inbound
            ? attributes.first("server.port", "net.host.port")?.integer
            : attributes.first("server.port", "net.peer.port")?.integer
        // The conventions write an IPv6 address bare; old ones put a port in `http.host`.
        if let name = host {
            var authority = URLAuthority(address: name)
            if authority.port == nil, let port, port != URLAuthority.defaultPort(ofScheme: scheme) { authority.port = port }
            host = authority.text
        }
        var target = attributes["http.target"]?.text ?? attributes["url.path"]?.text ?? "/"
        if attributes["http.target"] == nil, let query = attributes["url.query"]?.text, !query.isEmpty {
            target += "?" + query
        }
        return "\(scheme)://\(host ?? "unknown-host")\(target.hasPrefix("/") ? "" : "/")\(target)"
    }

    private static func headers(_ attributes: Attributes, prefix: String) -> [HTTPHeader] {
        var headers: [HTTPHeader] = []
        // Compared as bytes: `hasPrefix` compares Characters, for every attribute.
        for pair in attributes.pairs where pair.key.utf8.count > prefix.utf8.count && pair.key.utf8.starts(with: prefix.utf8) {
            let name = String(decoding: pair.key.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
            for value in pair.value.strings { headers.append(HTTPHeader(name: name, value: value)) }
        }
        return headers
    }

    private static func body(_ attributes: Attributes, content: String, sizes: String...) -> CapturedBody? {
        let size = sizes.lazy.compactMap { attributes[$0]?.integer }.first
        if let text = attributes[content]?.text {
            let data = Data(text.utf8)
            return CapturedBody(data: data, size: max(size ?? data.count, data.count), isTruncated: (size ?? 0) > data.count)
        }
        // Only the size is known: an empty prefix of a body of that size.
        guard let size, size > 0 else { return nil }
        return CapturedBody(data: Data(), size: size, isTruncated: true)
    }

    /// A failure worth showing: an `error.type` that is not just the status
    /// code (the stable convention sets it to "500" for a 500), or a span
    /// that ended in error without a response.
    private static func error(_ span: OTLPSpan, hasResponse: Bool) -> FlowError? {
        let errorType = span.attributes["error.type"]?.text
        if let errorType, Int(errorType) == nil {
            return FlowError(domain: "OpenTelemetry", code: 0,
                             message: span.statusMessage.isEmpty ? errorType : "\(errorType): \(span.statusMessage)")
        }
        if span.statusCode == 2, !hasResponse {
            return FlowError(domain: "OpenTelemetry", code: 0, message: span.statusMessage.isEmpty ? "span status error" : span.statusMessage)
        }
        return nil
    }
}
