import Foundation
import InspectorCore
import WireProtocol

/// Section 5: reading a large HAR file. The file is written first; the read
/// runs in a child process of this executable so that its peak resident
/// memory is its own, not the writer's.
enum HARBenchmark {
    static let childFlag = "--child-read-har"

    static func flows(_ count: Int) -> [NetworkLog] {
        let start = Date(timeIntervalSince1970: 1_763_717_923)
        let json = Data(#"{"id":42,"name":"widget","tags":["a","b"],"price":9.99}"#.utf8)
        return (0..<count).map { index in
            let jitter = Double(index % 50) / 1000
            let timing = Timing(startedAt: start.addingTimeInterval(Double(index) / 100), requestSent: 0.001,
                                firstResponseByte: 0.01 + jitter, finished: 0.02 + jitter)
            return NetworkLog(
                sessionID: 1, taskID: index,
                request: Request(method: index % 5 == 0 ? "POST" : "GET",
                                 url: "https://api.example.com/v1/items/\(index)?page=\(index % 10)",
                                 headers: [HTTPHeader(name: "Accept", value: "application/json"),
                                           HTTPHeader(name: "User-Agent", value: "bench/1.0")],
                                 body: index % 5 == 0 ? CapturedBody(data: json) : nil),
                response: Response(statusCode: index % 17 == 0 ? 500 : 200,
                                   headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                                             HTTPHeader(name: "Content-Length", value: "\(json.count)")],
                                   body: CapturedBody(data: json), mimeType: "application/json"),
                timing: timing,
                state: .completed)
        }
    }

    static func run(tiny: Bool) throws -> Table {
        let count = tiny ? 1_000 : 100_000
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-bench-\(getpid()).har")
        defer { try? FileManager.default.removeItem(at: url) }
        var data: Data? = try HARFile.encode(flows(count), prettyPrinted: true)
        let bytes = data!.count
        try data!.write(to: url)
        data = nil

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [childFlag, url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard process.terminationStatus == 0, fields.count == 3, Int(fields[2]) == count else {
            throw BenchmarkError(description: "HAR read child failed: \(output)")
        }
        var table = Table(title: "5. Reading a HAR file (separate process)",
                          columns: ["flows", "file MB", "read s", "flows/s", "peak RSS MB", "RSS / file size"])
        table.add(["\(count)", format(Double(bytes) / 1e6), format(fields[0], 2), formatCount(Double(count) / fields[0]),
                   format(fields[1] / 1e6), format(fields[1] / Double(bytes), 1) + "x"])
        return table
    }

    /// The child: read the file, print "seconds peakRSSBytes flowCount".
    static func childRead(path: String) throws {
        var count = 0
        let seconds = try measure {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            count = try HARFile.decode(data).count
        }
        print(seconds, peakResidentBytes(), count)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
}
