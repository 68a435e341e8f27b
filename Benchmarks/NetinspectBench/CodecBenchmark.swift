import Foundation
import WireProtocol

/// Section 2: encode and decode rates for header-only flows and for flows
/// with 64 KiB bodies, each on one core, in both protocol versions: the
/// agent's path (frames written into one reused buffer) and the viewer's
/// (``MessageDecoder`` fed 64 KiB reads).
enum CodecBenchmark {
    static func headerOnlyFlow(_ index: Int) -> Message {
        .flowStarted(NetworkLog(
            sessionID: 1, taskID: index,
            request: Request(method: "GET", url: "https://api.example.com/v1/orders/\(index)?include=items",
                             headers: [HTTPHeader(name: "Accept", value: "application/json"),
                                       HTTPHeader(name: "User-Agent", value: "orders-service/1.4 (Linux)"),
                                       HTTPHeader(name: "X-Request-ID", value: "9b2f1c3e-\(index)")]),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_763_717_923 + Double(index) / 1000)),
            state: .pending))
    }

    static func bodyFlow(_ index: Int, body: Data) -> Message {
        .flowFinished(FlowFinished(
            id: FlowID(), state: .completed,
            response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
                               body: CapturedBody(data: body), mimeType: "application/octet-stream"),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_763_717_923), requestSent: 0.001, firstResponseByte: 0.002, finished: 0.01)))
    }

    static func run(tiny: Bool) throws -> Table {
        var table = Table(title: "2. Codec (one core)", columns: ["payload", "messages", "encode msg/s", "encode MB/s", "decode msg/s", "decode MB/s", "target"])
        let headerCount = tiny ? 2_000 : 200_000
        let bodyCount = tiny ? 50 : 2_000
        let body = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        // NETINSPECT_BENCH_CODEC=header: only the header-only rows, for profiling.
        let headerRowsOnly = ProcessInfo.processInfo.environment["NETINSPECT_BENCH_CODEC"] == "header"
        for version in [1, 2] {
            try row(&table, "header-only flow, v\(version)", count: headerCount, version: version,
                    target: "decode ≥ 100 k msg/s", make: headerOnlyFlow)
            if headerRowsOnly { continue }
            try row(&table, "64 KiB body, v\(version)", count: bodyCount, version: version, target: "",
                    make: { bodyFlow($0, body: body) })
        }
        return table
    }

    private static func row(
        _ table: inout Table, _ name: String, count: Int, version: Int, target: String, make: (Int) -> Message
    ) throws {
        let messages = (0..<count).map(make)
        let hello = Message.hello(Hello(agentName: "bench", agentVersion: "0", appName: "bench", processID: 1, hostName: "h"))
        let encoder = FrameEncoder()
        var stream: [UInt8] = []
        let encodeTime = try bestOf(3) {
            stream.removeAll(keepingCapacity: true)
            try encoder.encode(hello, appendingTo: &stream)
            for message in messages { try encoder.encode(message, version: version, appendingTo: &stream) }
        }
        var decoded = 0
        let decodeTime = try bestOf(3) {
            var decoder = MessageDecoder()
            decoded = 0
            // Feed in 64 KiB reads, as a socket would deliver them.
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + 65_536)
                decoder.append(contentsOf: stream[offset..<end])
                while try decoder.next() != nil { decoded += 1 }
                offset = end
            }
        }
        precondition(decoded == count + 1, "decoded \(decoded) of \(count + 1)")
        let megabytes = Double(stream.count) / 1_000_000
        table.add([name, "\(count)", formatCount(Double(count) / encodeTime), format(megabytes / encodeTime),
                   formatCount(Double(count) / decodeTime), format(megabytes / decodeTime), target])
    }
}
