import Foundation
import WireProtocol

/// The recordings a server replay answers from (`--server-replay FILE`,
/// `:replay.server FILE`), made into the book agents keep.
///
/// Only what an answer needs travels: each recorded response with its
/// request's key (two 8-byte digests, not the request), in messages each
/// well under the agent's frame limit.
///
/// ```swift
/// let replay = try ServerReplaySet(paths: ["recorded.har"], options: ServerReplayOptions())
/// inbox.replaceServerReplay(replay.frames())
/// ```
package struct ServerReplaySet: Sendable {
    /// The files read, as named.
    var paths: [String]
    var options: ServerReplayOptions
    /// One per recorded response, in the order they were recorded.
    package var entries: [ServerReplayEntry]
    /// Flows of the files that cannot be replayed, with why: a person
    /// should not wonder why a request went to the network.
    var skipped: [String]

    /// The most JSON one message carries: well under the agent's 16 MiB
    /// frame limit, so an estimate may be off without a frame refused.
    static let partBytes = 4 * 1024 * 1024
    /// A response larger than this cannot travel in one message.
    static let largestResponse = 12 * 1024 * 1024

    /// Reads every file (HAR, ours or another tool's, or `--save`'s JSON lines).
    /// - Throws: ``FlowFile/ReadError`` naming the file that cannot be read.
    package init(paths: [String], options: ServerReplayOptions) throws(FlowFile.ReadError) {
        var flows: [NetworkLog] = []
        for path in paths { flows += try FlowFile.read(path: path) }
        self.init(flows: flows, paths: paths, options: options)
    }

    /// The set for flows already read.
    init(flows: [NetworkLog], paths: [String], options: ServerReplayOptions) {
        self.paths = paths
        self.options = options
        var entries: [ServerReplayEntry] = []
        var skipped: [String] = []
        for flow in flows.sorted(by: { $0.timing.startedAt < $1.timing.startedAt }) {
            let name = "\(flow.request.method) \(flow.request.url)"
            guard flow.direction != .inbound else { continue }
            guard let response = flow.response, flow.webSocket == nil, flow.grpc == nil else {
                if flow.response == nil { skipped.append("\(name): no response recorded") }
                continue
            }
            guard (response.body?.data.count ?? 0) <= Self.largestResponse else {
                skipped.append("\(name): a response body over \(Self.largestResponse / 1024 / 1024) MiB")
                continue
            }
            if response.body?.isTruncated == true {
                skipped.append("\(name): the recording holds only the start of its response body")
                continue
            }
            guard let key = ServerReplayKey(method: flow.request.method, url: flow.request.url, headers: flow.request.headers,
                                            body: flow.request.body?.data, options: options)
            else {
                skipped.append("\(name): the URL cannot be read")
                continue
            }
            entries.append(ServerReplayEntry(key: key, recordedID: flow.id, response: response,
                                             wait: flow.timing.firstResponseByte))
        }
        self.entries = entries
        self.skipped = skipped
    }

    /// The book as `serverReplay` frames, to send in order; the last puts
    /// it in force.
    package func frames() -> [[UInt8]] {
        var parts: [[ServerReplayEntry]] = [[]]
        var size = 0
        for entry in entries {
            let estimate = Self.estimatedBytes(entry)
            if size + estimate > Self.partBytes, !parts[parts.count - 1].isEmpty {
                parts.append([])
                size = 0
            }
            parts[parts.count - 1].append(entry)
            size += estimate
        }
        return parts.enumerated().map { index, entries in
            let book = ServerReplayBook(options: options, entries: entries, continues: index < parts.count - 1)
            return Array(ViewerMessage.serverReplay(book).frame())
        }
    }

    /// Base64 grows a body by a third; headers and the rest are JSON text.
    private static func estimatedBytes(_ entry: ServerReplayEntry) -> Int {
        let body = entry.response.body?.data.count ?? 0
        let headers = entry.response.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
        return body * 4 / 3 + headers + 256
    }

    /// What a headless run says on stderr as it starts: the summary, and
    /// each skipped flow with why (the first ten).
    package var report: String {
        var lines = ["server replay: \(summary)"]
        lines += skipped.prefix(10).map { "  skipped \($0)" }
        if skipped.count > 10 { lines.append("  … and \(skipped.count - 10) more") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "2 files, 130 responses (3 flows skipped)".
    package var summary: String {
        let files = paths.count == 1 ? paths[0] : "\(paths.count) files"
        let skippedText = skipped.isEmpty ? "" : " (\(skipped.count) flow\(skipped.count == 1 ? "" : "s") skipped)"
        return "\(files): \(entries.count) response\(entries.count == 1 ? "" : "s")\(skippedText)"
    }
}
