import Foundation
import InspectorCore
import OTLPReceiver
import WireProtocol

/// Section 7: OpenTelemetry spans in over OTLP/HTTP. Clients POST
/// pre-encoded protobuf exports of 512 HTTP spans (the Collector's and the
/// SDKs' default batch) on keep-alive connections, each waiting for its
/// reply as an exporter does, to the real receiver; one thread drains the
/// inbox into the real store, as the UI thread does. The clock stops when
/// the last span is a flow in the store.
enum OTLPIngestBenchmark {
    static let spansPerExport = 512

    static func run(tiny: Bool) throws -> Table {
        var table = Table(title: "7. OTLP/HTTP span ingest (real receiver and store, protobuf, 512 spans a request)",
                          columns: ["connections", "spans", "seconds", "spans/s", "target"])
        for connections in [1, 4] {
            let exportsPerConnection = (tiny ? 4 : 200) / connections
            let spans = connections * exportsPerConnection * spansPerExport
            let seconds = try measure(connections: connections, exportsPerConnection: exportsPerConnection)
            table.add(["\(connections)", "\(spans)", format(seconds, 2), formatCount(Double(spans) / seconds), "≥ 50 k spans/s"])
        }
        return table
    }

    private static func measure(connections: Int, exportsPerConnection: Int) throws -> Double {
        let inbox = Inbox()
        let receiver = OTLPReceiver(configuration: OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)]), inbox: inbox)
        guard case .tcp(_, let port) = try receiver.start().first else { throw BenchmarkError(description: "the receiver bound nothing") }
        defer { receiver.shutdown() }
        // Distinct trace ids throughout: a repeated span would replace its flow, not add one.
        let bodies = (0..<connections).map { connection in
            (0..<exportsPerConnection).map { export in
                Self.export(number: connection * exportsPerConnection + export).protobufBytes()
            }
        }
        let expectedFlows = connections * exportsPerConnection * spansPerExport
        let drainer = Drainer(inbox: inbox, expectedFlows: expectedFlows, probes: ProbeClock())
        let drainThread = Thread { drainer.run() }
        drainThread.start()
        let start = ContinuousClock.now
        let senders = try bodies.map { exports in
            let connection = try OTLPBenchConnection(port: port)
            let thread = Thread { for body in exports { connection.post(body) } }
            thread.start()
            return connection
        }
        while !drainer.isDone, ContinuousClock.now - start < .seconds(120) { usleep(1_000) }
        withExtendedLifetime(senders) {}
        guard let finished = drainer.finishedAt else { throw BenchmarkError(description: "span ingest did not complete within 120 s") }
        return (finished - start).seconds
    }

    /// A batch as an instrumented service sends it: server spans, each with
    /// a client span under it, stable HTTP conventions.
    private static func export(number: Int) -> TraceExport {
        var spans: [OTLPSpan] = []
        for index in 0..<spansPerExport {
            var span = OTLPSpan()
            span.traceID = withUnsafeBytes(of: UInt64(number).bigEndian, Array.init) + withUnsafeBytes(of: UInt64(index / 2 + 1).bigEndian, Array.init)
            span.spanID = withUnsafeBytes(of: UInt64(index + 1).bigEndian, Array.init)
            let isServer = index.isMultiple(of: 2)
            if !isServer { span.parentSpanID = withUnsafeBytes(of: UInt64(index).bigEndian, Array.init) }
            span.kind = isServer ? .server : .client
            span.name = isServer ? "GET /orders/{id}" : "GET"
            span.startTimeUnixNano = 1_700_000_000_000_000_000 + UInt64(index) * 1_000_000
            span.endTimeUnixNano = span.startTimeUnixNano + 12_000_000
            span.attributes = Attributes(isServer ? [
                ("http.request.method", .string("GET")), ("url.scheme", .string("http")), ("server.address", .string("orders.local")),
                ("server.port", .int(8080)), ("url.path", .string("/orders/\(index)")), ("http.response.status_code", .int(200)),
                ("http.request.header.accept", .array([.string("application/json")])),
            ] : [
                ("http.request.method", .string("GET")), ("url.full", .string("http://stock.local/items/\(index)")),
                ("http.response.status_code", .int(200)), ("server.address", .string("stock.local")),
            ])
            spans.append(span)
        }
        return TraceExport(resourceSpans: [ResourceSpans(
            resource: Attributes([("service.name", .string("orders")), ("host.name", .string("bench"))]), spans: spans)])
    }
}

/// One keep-alive HTTP/1.1 connection that POSTs and waits for each reply.
final class OTLPBenchConnection: @unchecked Sendable {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchmarkError(description: "connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    func post(_ body: [UInt8]) {
        let head = "POST /v1/traces HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-protobuf\r\nContent-Length: \(body.count)\r\n\r\n"
        write(Array(head.utf8) + body)
        // The receiver's success reply to protobuf has an empty body: read the head.
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while !reply.ends(with: [13, 10, 13, 10]), recv(descriptor, &byte, 1, 0) == 1 { reply.append(byte) }
    }

    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
