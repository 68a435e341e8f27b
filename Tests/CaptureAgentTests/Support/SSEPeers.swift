import Foundation
import NIOConcurrencyHelpers
import WireProtocol
import XCTest
@testable import CaptureAgent

/// The events a lockstep SSE source writes: `count` events, each one
/// written only once the test said go (event 0 at once), then the end.
enum SSEEvents {
    static let count = 4

    /// The text of event `index`, as the source writes it.
    static func event(_ index: Int) -> String {
        "id: \(index)\nevent: tick\ndata: {\"n\": \(index)}\n\n"
    }
}

/// A source of server-sent events that waits for the test between events,
/// so that a test can look at what the app and the viewer have while the
/// source has sent events 0...k and not k+1.
protocol LockstepSource: Sendable {
    /// Lets the source write event `step` (`SSEEvents.count`: the end).
    func go(_ step: Int)
}

/// The go-signals of a source inside the test process (a Hummingbird or
/// Vapor route): the handler waits for each one.
final class StepGate: LockstepSource {
    private let allowed = NIOLockedValueBox(0)
    /// A bound for a broken build, not a speed target.
    private let patience = 20.0

    func go(_ step: Int) { allowed.withLockedValue { $0 = max($0, step) } }

    /// Waits until the test lets step `step` go.
    func wait(for step: Int) async {
        _ = await waitUntil(timeout: patience, every: .milliseconds(2)) { allowed.withLockedValue { $0 >= step } }
    }
}

/// A Python SSE server on 127.0.0.1 (`python3`, standard library only):
/// `GET /events` answers `text/event-stream`, chunked, and writes
/// ``SSEEvents``, each after a line on its standard input (the go-signal).
final class PythonSSESource: LockstepSource, @unchecked Sendable {
    private static let script = #"""
import http.server, sys
COUNT = int(sys.argv[1])
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index in range(COUNT + 1):
            if index > 0 and not sys.stdin.readline():
                return
            if index == COUNT:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            else:
                self.chunk(("id: %d\nevent: tick\ndata: {\"n\": %d}\n\n" % (index, index)).encode())
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""#

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let sent = NIOLockedValueBox(0)
    let port: Int

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", Self.script, String(SSEEvents.count)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            guard !more.isEmpty else { break }
            line += more
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile)
        }
        self.port = port
    }

    var url: String { "http://127.0.0.1:\(port)/events" }

    func go(_ step: Int) {
        // One line per step, in order, whatever step the test names.
        let lines = sent.withLockedValue { sent -> Int in
            defer { sent = max(sent, step) }
            return max(0, step - sent)
        }
        if lines > 0 { input.fileHandleForWriting.write(Data(String(repeating: "go\n", count: lines).utf8)) }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        // SIGKILL: under the test runner a source sent SIGTERM (`terminate()`) was seen to live on, and the wait to hang.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// What the test sees of one lockstep stream: at each step, the app's text.
struct LockstepRun {
    /// The text the app had read when the source had written events 0...k (index k).
    var appTextAtStep: [String] = []
}

/// Drives a source in lockstep: at step k, waits until the app has event k,
/// notes the app's text, and, with `viewer`, waits until the viewer's flow
/// shows event k too (as a part, the flow not finished): both before the
/// source may write event k+1. Then lets the source end, and waits for the
/// app to have it all.
func runLockstep(source: LockstepSource, appText: @escaping @Sendable () -> String,
                 viewerFlow: (@Sendable () -> NetworkLog?)? = nil,
                 file: StaticString = #filePath, line: UInt = #line) async -> LockstepRun {
    var run = LockstepRun()
    for step in 0 ..< SSEEvents.count {
        let wanted = (0 ... step).map(SSEEvents.event).joined()
        let appHasIt = await waitUntil(timeout: 20) { appText().hasSuffix(SSEEvents.event(step)) }
        XCTAssertTrue(appHasIt, "the app never got event \(step) before the source wrote the next: \(appText().debugDescription)",
                      file: file, line: line)
        run.appTextAtStep.append(appText())
        if let viewerFlow {
            let viewerHasIt = await waitUntil(timeout: 20) {
                guard let flow = viewerFlow(), !flow.state.isFinal, let body = flow.response?.body else { return false }
                return String(decoding: body.data, as: UTF8.self) == wanted
            }
            XCTAssertTrue(viewerHasIt, "the viewer never got event \(step) before the source wrote the next: "
                + "\(viewerFlow().map { "\($0.state) \(String(decoding: $0.response?.body?.data ?? Data(), as: UTF8.self).debugDescription)" } ?? "no flow")",
                file: file, line: line)
        }
        source.go(step + 1)
    }
    let all = (0 ..< SSEEvents.count).map(SSEEvents.event).joined()
    let ended = await waitUntil(timeout: 20) { appText() == all }
    XCTAssertTrue(ended, "the app never got the whole stream: \(appText().debugDescription)", file: file, line: line)
    return run
}

/// Checks a finished streamed flow as the viewer assembled it: the whole
/// stream as its body, and one part per event, in order, each where the
/// last one ended, its time after the one before.
func assertStreamedFlow(_ flow: NetworkLog?, file: StaticString = #filePath, line: UInt = #line) {
    guard let flow else { return XCTFail("no finished flow", file: file, line: line) }
    let all = (0 ..< SSEEvents.count).map(SSEEvents.event).joined()
    XCTAssertEqual(flow.state, .completed, file: file, line: line)
    XCTAssertEqual(flow.response?.body.map { String(decoding: $0.data, as: UTF8.self) }, all, file: file, line: line)
    let marks = flow.parts?.marks.filter { $0.direction == .response } ?? []
    XCTAssertEqual(marks.map(\.size), (0 ..< SSEEvents.count).map { SSEEvents.event($0).utf8.count },
                   "one part per event, as the app read them", file: file, line: line)
    XCTAssertEqual(marks.map(\.offset), marks.indices.map { index in marks[..<index].map(\.size).reduce(0, +) },
                   file: file, line: line)
    XCTAssertEqual(marks.map(\.at), marks.map(\.at).sorted(), file: file, line: line)
}
