import CaptureAgent
import Foundation
import InspectorCore
import WireProtocol

/// Section 11: what a server replay of a large recording costs. The design
/// sends each agent the recorded responses once, with two 8-byte keys in
/// place of each request, so an answer costs the app no round trip; this
/// measures what that sends (against the file it came from), how long the
/// viewer takes to make it and an agent to take it in, and what one
/// lookup adds to a request.
enum ServerReplayBenchmark {
    static func run(tiny: Bool) throws -> Table {
        let count = tiny ? 200 : 5_000
        let flows = recording(count)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-replay-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let har = directory.appendingPathComponent("recorded.har")
        try HARFile.write(flows, to: har.path)
        let harBytes = (try FileManager.default.attributesOfItem(atPath: har.path)[.size] as? Int) ?? 0

        var frames: [[UInt8]] = []
        let load = bestOf(3) {
            let replay = try! ServerReplaySet(paths: [har.path], options: ServerReplayOptions())
            frames = replay.frames()
        }
        let sent = frames.reduce(0) { $0 + $1.count }

        var store = ServerReplayStore(redactURL: { $0.absoluteString }, redactHeaders: { $0 })
        let take = bestOf(3) {
            store = ServerReplayStore(redactURL: { $0.absoluteString }, redactHeaders: { $0 })
            var decoder = ViewerMessageDecoder(maximumFrameSize: Wire.defaultMaximumFrameSize, acceptsRules: true)
            for frame in frames { decoder.append(contentsOf: frame) }
            while case .serverReplay(let book)? = try! decoder.next() { store.receive(book) }
        }
        precondition(store.isActive)

        let requests = flows.map { ExchangeRequest(method: $0.request.method, url: URL(string: $0.request.url)!, headers: $0.request.headers,
                                                  body: $0.request.body?.data) }
        var answered = 0
        let lookups = bestOf(3) {
            answered = 0
            store = ServerReplayStore(redactURL: { $0.absoluteString }, redactHeaders: { $0 })
            var decoder = ViewerMessageDecoder(maximumFrameSize: Wire.defaultMaximumFrameSize, acceptsRules: true)
            for frame in frames { decoder.append(contentsOf: frame) }
            while case .serverReplay(let book)? = try! decoder.next() { store.receive(book) }
            for request in requests where store.answer(for: request) != nil { answered += 1 }
        } - take
        precondition(answered == count, "every recorded request is answered (\(answered) of \(count))")

        var table = Table(title: "11. Server replay of a recording (\(count) flows, 2 KiB JSON responses)",
                          columns: ["HAR file MB", "sent to each agent MB (messages)", "sent / file",
                                    "viewer: read + make, ms", "agent: take in, ms", "agent: one lookup, µs"])
        table.add([format(Double(harBytes) / 1e6, 2), format(Double(sent) / 1e6, 2) + " (\(frames.count))",
                   format(Double(sent) / Double(harBytes), 2) + "x", format(load * 1000), format(take * 1000),
                   format(lookups / Double(count) * 1e6, 2)])
        return table
    }

    /// A service's traffic: mostly GETs of items, some POSTs, 2 KiB of JSON each.
    static func recording(_ count: Int) -> [NetworkLog] {
        let start = Date(timeIntervalSince1970: 1_763_717_923)
        let item = #"{"id":1,"name":"widget","description":"\#(String(repeating: "lorem ipsum ", count: 160))"}"#
        return (0..<count).map { index in
            let body = Data(item.replacingOccurrences(of: #""id":1"#, with: #""id":\#(index)"#).utf8)
            return NetworkLog(
                sessionID: 1, taskID: index,
                request: Request(method: index % 5 == 0 ? "POST" : "GET",
                                 url: "https://api.example.com/v1/items/\(index)?page=\(index % 10)",
                                 headers: [HTTPHeader(name: "Accept", value: "application/json"),
                                           HTTPHeader(name: "User-Agent", value: "bench/1.0")],
                                 body: index % 5 == 0 ? CapturedBody(data: Data(#"{"q":\#(index)}"#.utf8)) : nil),
                response: Response(statusCode: 200,
                                   headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                                             HTTPHeader(name: "Content-Length", value: "\(body.count)")],
                                   body: CapturedBody(data: body), mimeType: "application/json"),
                timing: Timing(startedAt: start.addingTimeInterval(Double(index) / 100), requestSent: 0.001,
                               firstResponseByte: 0.02, finished: 0.03),
                state: .completed)
        }
    }
}
