import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// Section 4: the UI core with 100,000 flows in the store: render a 200x60
/// frame, apply a filter, re-sort by duration, and resident memory per flow
/// without bodies (measured in a child process, so nothing else counts).
enum UIBenchmark {
    static let childFlag = "--child-ui-memory"
    static let size = Size(width: 200, height: 60)

    /// Inbox events for `count` flows from one agent: realistic headers, no
    /// bodies, a status mix, one in ten still pending. From flow `first` on,
    /// the agent's connection announced only before flow 0.
    static func events(_ count: Int, from first: Int = 0) -> [InboxEvent] {
        let connection = ConnectionID(1)
        let hello = Hello(agentName: "bench", agentVersion: "0", appName: "bench-app", processID: 1, hostName: "h")
        var events: [InboxEvent] = first == 0 ? [.connected(connection, hello, peer: "bench")] : []
        events.reserveCapacity(count * 2 + 1)
        let statuses = [200, 200, 201, 204, 301, 404, 500, 503]
        let start = Date(timeIntervalSince1970: 1_763_717_923)
        for index in first ..< first + count {
            let id = FlowID()
            let request = Request(method: index % 4 == 0 ? "POST" : "GET",
                                  url: "https://host\(index % 50).example.com/v1/items/\(index)?page=\(index % 7)",
                                  headers: [HTTPHeader(name: "Accept", value: "application/json"),
                                            HTTPHeader(name: "User-Agent", value: "orders-service/1.4 (Linux)"),
                                            HTTPHeader(name: "X-Request-ID", value: "req-\(index)"),
                                            HTTPHeader(name: "Accept-Encoding", value: "gzip")])
            events.append(.message(connection, .flowStarted(NetworkLog(id: id, sessionID: 1, taskID: index, request: request,
                                                                        timing: Timing(startedAt: start.addingTimeInterval(Double(index) / 100))))))
            guard index % 10 != 0 else { continue }
            let duration = Double((index &* 7919) % 5000) / 1000
            events.append(.message(connection, .flowFinished(FlowFinished(
                id: id, state: .completed,
                response: Response(statusCode: statuses[index % statuses.count],
                                   headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                                             HTTPHeader(name: "Cache-Control", value: "no-store"),
                                             HTTPHeader(name: "Date", value: "Sat, 21 Nov 2026 10:00:00 GMT")],
                                   mimeType: "application/json"),
                timing: Timing(startedAt: start.addingTimeInterval(Double(index) / 100), requestSent: 0.001,
                               firstResponseByte: duration * 0.7, finished: duration)))))
        }
        return events
    }

    static func state(flows count: Int) -> AppState {
        var state = AppState(limits: FlowStore.Limits(maximumFlows: count), size: size, timeZone: TimeZone(identifier: "UTC")!)
        ingest(count, into: &state)
        return state
    }

    /// Hands `count` flows to the reducer in drains of `drainFlows`, each
    /// made, reduced and let go before the next, as netinspect's inbox hands
    /// them over, so the heap is laid out as netinspect's would be. (Made all
    /// at once, while flow events were `indirect`, the freed boxes left holes
    /// between the flows' strings: 2.8 k resident a flow, not 1.55 k.)
    static func ingest(_ count: Int, into state: inout AppState, drainFlows: Int = 500) {
        for first in stride(from: 0, to: count, by: drainFlows) {
            _ = Reducer.reduce(&state, .inbox(events(min(drainFlows, count - first), from: first), at: Date()))
        }
    }

    static func run(tiny: Bool) throws -> Table {
        let count = tiny ? 2_000 : 100_000
        var state = state(flows: count)
        var table = Table(title: "4. UI core with \(count) flows (one core)", columns: ["operation", "time", "target"])

        var screen = Renderer.render(state, size: size)
        let render = bestOf(5) { screen = Renderer.render(state, size: size) }
        precondition(screen.text.contains("\(count)/\(count) flows"))
        table.add(["render one 200x60 frame (list, follow)", format(render * 1000, 2) + " ms", "≤ 5 ms"])

        for expression in ["~c 5xx", "~u \"items/[0-9]+7\\?\"", "~h \"x-request-id: req-99\"", "!~m GET & ~d host4"] {
            var filtered = state
            let seconds = measure { _ = Reducer.reduce(&filtered, .applyFilter(expression)) }
            precondition(filtered.filterText == expression, "filter \(expression) was refused")
            table.add(["filter \(expression) (\(filtered.rows.count) shown)", format(seconds * 1000, 1) + " ms", "≤ 50 ms"])
        }

        let sort = measure { _ = Reducer.reduce(&state, .command(.cycleSort)) }
        precondition(state.view.sortKey == .duration)
        table.add(["re-sort by duration", format(sort * 1000, 1) + " ms", "≤ 100 ms"])

        let (base, other) = diffPair(bytes: tiny ? 64 * 1024 : 1024 * 1024)
        var differences = 0
        let diff = median((0..<5).map { _ in
            measure { differences = FlowDiff(base: base, other: other).lines(width: size.width).count }
        })
        precondition(differences > 0)
        let bodySize = Format.size(base.response?.body?.data.count ?? 0)
        table.add(["diff of two flows with \(bodySize) JSON bodies (compare + lines, median of 5)", format(diff * 1000, 1) + " ms", "≤ 50 ms"])

        for row in InsightsBenchmark.rows(state, count: count) { table.add(row) }

        let perFlow = try childMemoryPerFlow(count)
        table.add(["resident memory per flow, no bodies", "\(Int(perFlow)) B", "≤ 2048 B"])
        return table
    }

    /// Two flows whose JSON bodies of about `bytes` each (an array of
    /// records) differ in one value in fifty and in one added key.
    static func diffPair(bytes: Int) -> (NetworkLog, NetworkLog) {
        func body(changed: Bool) -> Data {
            var text = "{\"items\":["
            var index = 0
            while text.utf8.count < bytes {
                if index > 0 { text += "," }
                let price = changed && index % 50 == 7 ? "\(index).99" : "\(index).5"
                text += #"{"id":\#(index),"name":"item \#(index)","price":\#(price),"tags":["a","b","c"],"stock":{"warehouse":"w\#(index % 9)","count":\#(index * 3)}}"#
                index += 1
            }
            text += changed ? #"],"next":"cursor-2"}"# : "]}"
            return Data(text.utf8)
        }
        func flow(changed: Bool) -> NetworkLog {
            var log = NetworkLog(request: Request(method: "GET", url: "https://api.example.com/v1/items?page=\(changed ? 2 : 1)"),
                                 timing: Timing(startedAt: Date(timeIntervalSince1970: 1_763_717_923)))
            log.apply(FlowFinished(id: log.id, state: .completed,
                                   response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                                      body: CapturedBody(data: body(changed: changed)), mimeType: "application/json"),
                                   timing: Timing(startedAt: log.timing.startedAt, requestSent: 0.001, firstResponseByte: 0.02, finished: changed ? 0.05 : 0.04)))
            return log
        }
        return (flow(changed: false), flow(changed: true))
    }

    private static func childMemoryPerFlow(_ count: Int) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [childFlag, "\(count)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, let perFlow = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError(description: "memory child failed: \(output)")
        }
        return perFlow
    }

    /// The child: resident bytes added by a store of `count` flows, per flow,
    /// measured from before the events existed to after they are dropped, so
    /// the figure includes what the allocator keeps: an upper bound. The
    /// events come in drains (``ingest(_:into:drainFlows:)``).
    static func childMemory(count: Int) {
        let before = residentBytes()
        var state = AppState(limits: FlowStore.Limits(maximumFlows: count), size: size)
        ingest(count, into: &state)
        let after = residentBytes()
        print(Double(after - before) / Double(count))
        withExtendedLifetime(state) {}
    }
}
