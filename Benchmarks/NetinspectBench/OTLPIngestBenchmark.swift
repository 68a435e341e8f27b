import Foundation
import InspectorCore
import InspectorIngest
import OTLPReceiver
import WireProtocol

/// Section 7: OpenTelemetry spans in over OTLP/HTTP. Clients POST
/// pre-encoded protobuf exports of 512 HTTP spans (the Collector's and the
/// SDKs' default batch) on keep-alive connections, each waiting for its
/// reply as an exporter does, to the real receiver; one thread drains the
/// inbox into the real store, as the UI thread does. The clock stops when
/// the last span is a flow in the store. A request refused with 503 (the
/// inbox full: the store is behind) is sent again after 10 ms, as an
/// exporter retries, and counted.
///
/// For profiling, `NETINSPECT_BENCH_OTLP_EXPORTS=N` sets the exports sent
/// in each row (200 by default) and `NETINSPECT_BENCH_OTLP_CONNECTIONS=1`
/// runs one row.
enum OTLPIngestBenchmark {
    static let spansPerExport = 512

    static func run(tiny: Bool) throws -> Table {
        var table = Table(title: "7. OTLP/HTTP span ingest (real receiver and store, protobuf, 512 spans a request)",
                          columns: ["connections", "spans", "seconds", "spans/s", "CPU s", "spans per CPU s", "503 retries", "target"])
        let environment = ProcessInfo.processInfo.environment
        let exports = environment["NETINSPECT_BENCH_OTLP_EXPORTS"].flatMap { Int($0) } ?? (tiny ? 4 : 200)
        let rows = environment["NETINSPECT_BENCH_OTLP_CONNECTIONS"].flatMap { Int($0) }.map { [$0] } ?? [1, 4]
        for connections in rows {
            let exportsPerConnection = max(1, exports / connections)
            let spans = connections * exportsPerConnection * spansPerExport
            let (seconds, cpu, retries) = try measure(connections: connections, exportsPerConnection: exportsPerConnection)
            table.add(["\(connections)", "\(spans)", format(seconds, 2), formatCount(Double(spans) / seconds), format(cpu, 2),
                       formatCount(Double(spans) / cpu), "\(retries)", "≥ 50 k spans/s"])
        }
        return table
    }

    /// The CPU time the whole process has used (every thread: receiver,
    /// store, senders), which a loaded machine disturbs less than wall time.
    private static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    private static func measure(connections: Int, exportsPerConnection: Int) throws -> (seconds: Double, cpu: Double, retries: Int) {
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
        let cpuAtStart = processCPUSeconds()
        let senders = try bodies.map { exports in
            let connection = try OTLPBenchConnection(port: port)
            let thread = Thread { for body in exports { connection.post(body) } }
            thread.start()
            return connection
        }
        while !drainer.isDone, ContinuousClock.now - start < .seconds(120) { usleep(1_000) }
        let cpu = processCPUSeconds() - cpuAtStart
        withExtendedLifetime(senders) {}
        guard let finished = drainer.finishedAt else { throw BenchmarkError(description: "span ingest did not complete within 120 s") }
        return ((finished - start).seconds, cpu, senders.reduce(0) { $0 + $1.retries })
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

    /// Requests answered 503 and sent again.
    private(set) var retries = 0

    /// POSTs one export until it is accepted (200), retrying 503 after 10 ms.
    func post(_ body: [UInt8]) {
        let request = Array("POST /v1/traces HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-protobuf\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        while true {
            write(request)
            guard let status = readReply(), status == 503 else { return }
            retries += 1
            usleep(10_000)
        }
    }

    /// Reads a reply's head and its body (by `Content-Length`); its status code.
    private func readReply() -> Int? {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.ends(with: [13, 10, 13, 10]) {
            guard recv(descriptor, &byte, 1, 0) == 1 else { return nil }
            head.append(byte)
        }
        let text = String(decoding: head, as: UTF8.self).lowercased()
        let length = text.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        var body = [UInt8](repeating: 0, count: length)
        var received = 0
        while received < length {
            let count = body.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + received, length - received, 0) }
            guard count > 0 else { return nil }
            received += count
        }
        return text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
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
