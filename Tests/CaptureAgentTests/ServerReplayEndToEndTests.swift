import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent
#if AsyncHTTPClient
import AsyncHTTPClient
#endif

/// Record, then replay, as a person does it: the real `netinspect --json
/// --save FILE` records an app's traffic to real loopback servers; then the
/// servers go and `netinspect --server-replay FILE` answers the same app
/// code from the recording.
final class ServerReplayEndToEndTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!
    private var scratch: URL!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("server-replay-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        server?.shutdown()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// netinspect with `arguments`, and an agent that allows control started after it.
    /// `Set-Cookie` is recorded whole (the agent redacts it by default, and
    /// a recording replays what it holds).
    private func start(_ arguments: [String], name: String = #function) throws -> (InspectorProcess, CaptureAgent) {
        let path = temporarySocketPath(String(name.prefix { $0 != "(" }.suffix(20)) + String(arguments.count))
        let inspector = try InspectorProcess(listen: "unix:\(path)", arguments: arguments)
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) {
            $0.allowsControl = true
            $0.redactedHeaders.remove("Set-Cookie")
            $0.flushTimeout = 1
            $0.initialConnectionWait = 5
        })
        return (inspector, agent)
    }

    private func flows(_ inspector: InspectorProcess, count: Int) throws -> [NetworkLog] {
        XCTAssertTrue(eventually { inspector.lineCount >= count }, "\(inspector.lineCount) of \(count) flows printed: \(inspector.errorOutput)")
        return try inspector.output.split(separator: "\n").map { try NetworkLog(jsonLine: Array($0.utf8)) }
    }

    private var requests: [URLRequest] {
        var post = URLRequest(url: server.url("/echo?kind=post"))
        post.httpMethod = "POST"
        post.httpBody = Data("order=7".utf8)
        return [URLRequest(url: server.url("/text?page=1")), URLRequest(url: server.url("/binary/3000")), post,
                URLRequest(url: server.url("/status/503")), URLRequest(url: server.url("/dup-headers"))]
    }

    private func session(_ agent: CaptureAgent) -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        return URLSession(configuration: configuration)
    }

    /// What the app sees of a response, but the `Date` the server stamps on each.
    private func seen(_ outcome: AppOutcome) -> AppOutcome {
        var outcome = outcome
        outcome.headers["Date"] = nil
        return outcome
    }

    func testURLSessionIsAnsweredFromASaveFileAndFromAHARAfterTheServerHasGone() throws {
        let saved = scratch.appendingPathComponent("recorded.jsonl").path
        let (recorder, recordingAgent) = try start(["--save", saved])
        let recordingSession = session(recordingAgent)
        let live = requests.map { seen(fetch($0, on: recordingSession).outcome) }
        XCTAssertEqual(live.map(\.status), [200, 200, 200, 503, 200])
        _ = try flows(recorder, count: requests.count)
        recordingSession.finishTasksAndInvalidate()
        recordingAgent.stop()
        recorder.killAndWait()
        server.shutdown()

        // The same file as HAR, as `--read … --har` writes it.
        let har = scratch.appendingPathComponent("recorded.har").path
        let converted = try ProgramRun.run([NetinspectBinary.url.path, "--read", saved, "--json", "--har", har])
        XCTAssertEqual(converted.status, 0, converted.output)

        for file in [saved, har] {
            let (replayer, agent) = try start(["--server-replay", file, "--server-replay-extra", "404"])
            let session = session(agent)
            let replayed = requests.map { seen(fetch($0, on: session).outcome) }
            XCTAssertEqual(replayed, live, "\(file): every response as recorded")
            let missing = fetch(URLRequest(url: server.url("/text?page=2")), on: session).outcome
            XCTAssertEqual(missing.status, 404, "--server-replay-extra 404 answers an unrecorded request")
            XCTAssertTrue(String(decoding: missing.body, as: UTF8.self).contains("no recorded response for GET"), "\(missing)")

            let logged = try flows(replayer, count: requests.count + 1)
            XCTAssertEqual(logged.map { $0.changes?.serverReplay?.extra }, [nil, nil, nil, nil, nil, "404"])
            XCTAssertEqual(logged.prefix(requests.count).map { $0.changes?.serverReplay?.left }, [4, 3, 2, 1, 0])
            XCTAssertTrue(replayer.errorOutput.contains("server replay: \(file): 5 responses"), replayer.errorOutput)
            session.finishTasksAndInvalidate()
            agent.stop()
            replayer.killAndWait()
        }
    }

    /// `netinspect ARGUMENTS -- AgentDemo URL` to its end (a minute bounds a hang).
    private func wrapping(_ arguments: [String], url: URL) throws -> ProgramRun.Finished {
        let demo = try ExampleProgram(name: "AgentDemo").executable().path
        let run = try ProgramRun.collect([NetinspectBinary.url.path] + arguments + ["--", demo, url.absoluteString], timeout: 60)
        XCTAssertFalse(run.timedOut, "netinspect \(arguments) did not end:\n\(run.output)\n\(run.errorOutput)")
        return run
    }

    /// GUIDE's own example: record a command's traffic, then let the
    /// recording answer the same command with the server gone.
    func testAWrappedCommandIsAnsweredFromTheRecordingWithTheServerStopped() throws {
        let saved = scratch.appendingPathComponent("recorded.jsonl").path
        let url = server.url("/echo")
        let recorded = try wrapping(["--json", "--save", saved], url: url)
        XCTAssertEqual(recorded.status, 0, recorded.output + recorded.errorOutput)
        XCTAssertTrue(recorded.output.contains("session POST: 200"), recorded.output)
        server.shutdown()

        let replayed = try wrapping(["--json", "--server-replay", saved, "--server-replay-extra", "404"], url: url)
        XCTAssertEqual(replayed.status, 0, "every request answered:\n\(replayed.output)\n\(replayed.errorOutput)")
        for line in ["shared GET: 200", "session GET: 200", "session POST: 200"] {
            XCTAssertTrue(replayed.output.contains(line), "\(line):\n\(replayed.output)")
        }
        let flows = try replayed.output.split(separator: "\n").filter { $0.hasPrefix("{") }.map { try NetworkLog(jsonLine: Array($0.utf8)) }
        XCTAssertEqual(flows.count, 3, replayed.output)
        XCTAssertEqual(flows.map { $0.changes?.serverReplay != nil }, [true, true, true], "each answered from the file, none from the network")
        XCTAssertFalse(replayed.errorOutput.contains("does not allow control"), replayed.errorOutput)
    }

    /// An app that does not allow control ignores a server replay: netinspect says so, once, as it connects.
    func testAnAppThatDoesNotAllowControlIsToldOfWhenAServerReplayIsOn() throws {
        let saved = scratch.appendingPathComponent("recorded.jsonl").path
        let (recorder, recordingAgent) = try start(["--save", saved])
        XCTAssertEqual(fetch(URLRequest(url: server.url("/text")), on: session(recordingAgent)).outcome.status, 200)
        _ = try flows(recorder, count: 1)
        recordingAgent.stop()
        recorder.killAndWait()

        let path = temporarySocketPath("replaynoctl")
        let replayer = try InspectorProcess(listen: "unix:\(path)", arguments: ["--server-replay", saved])
        defer { replayer.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.allowsControl = false; $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        XCTAssertTrue(eventually { replayer.errorOutput.contains("does not allow control") }, replayer.errorOutput)
        let notice = replayer.errorOutput.split(separator: "\n").filter { $0.contains("does not allow control") }
        XCTAssertEqual(notice.count, 1, replayer.errorOutput)
        let line = String(notice.first ?? "")
        XCTAssertTrue(line.contains("--server-replay") && line.contains("NETINSPECT_CONTROL=1"), line)
    }

    #if AsyncHTTPClient
    private func ahc(_ url: URL, agent: CaptureAgent) async -> AHCOutcome {
        var configuration = ahcConfiguration()
        agent.capture(&configuration)
        var outcome = await performAHC(AHCRequest(url: url.absoluteString), api: .async, configuration: configuration)
        outcome.headers.removeAll { $0.lowercased().hasPrefix("date:") }
        outcome.history = []
        return outcome
    }

    /// The recorded server stopped and nothing listening on its port: the
    /// real netinspect's `--server-replay` answers an AsyncHTTPClient app at
    /// once, through the agent's control tunnel. The times are printed (a
    /// bound here only says "not after the client's connect retries";
    /// netinspect-bench has the figures). One response is larger than the
    /// listener's write high-water mark (64 KiB): such a recording once
    /// never left netinspect, and nothing was replayed.
    func testAsyncHTTPClientIsAnsweredFromTheRecordingWithNothingListening() async throws {
        let saved = scratch.appendingPathComponent("recorded.jsonl").path
        let (recorder, recordingAgent) = try start(["--save", saved])
        var live: [AHCOutcome] = []
        for size in [2000, 10, 70_000] { live.append(await ahc(server.url("/binary/\(size)"), agent: recordingAgent)) }
        XCTAssertEqual(live.map(\.status), [200, 200, 200])
        _ = try flows(recorder, count: 3)
        recordingAgent.stop()
        recorder.killAndWait()
        server.shutdown()
        XCTAssertFalse(RealPeer.connects(to: server.port), "nothing listens where the server was")

        let (replayer, agent) = try start(["--server-replay", saved])
        defer { agent.stop(); replayer.killAndWait() }
        var times: [Duration] = []
        for (size, recorded) in zip([2000, 10, 70_000], live) {
            let started = ContinuousClock.now
            let replayed = await ahc(server.url("/binary/\(size)"), agent: agent)
            times.append(ContinuousClock.now - started)
            XCTAssertEqual(replayed, recorded, "\(size) bytes: as recorded")
        }
        print("server replay, AsyncHTTPClient, nothing listening: \(times.map { String(format: "%.1f ms", Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15) })")
        XCTAssertTrue(times.allSatisfy { $0 < .seconds(2) }, "answered at once, not after connect retries: \(times)")
        XCTAssertEqual(try flows(replayer, count: 3).filter { $0.changes?.serverReplay != nil }.count, 3)
    }
    #endif
}
