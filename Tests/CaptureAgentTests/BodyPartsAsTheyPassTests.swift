import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import WireProtocol
import XCTest
@testable import CaptureAgent
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import NIOCore
#endif
#if Hummingbird
import HTTPTypes
import Hummingbird
#endif

/// A streamed body reaches the viewer part by part as it passes, for
/// every client and server that streams: a source of server-sent events
/// writes event k+1 only once the test has seen event k arrive, in the app
/// and then in netinspect's own store (its real listener, which asks for
/// protocol version 2), so a part the agent held back would stop the
/// stream there. Each stream runs without and with the agent, and the app
/// must see the same text at every step. (Vapor's streamed bodies are not
/// recorded: a middleware cannot see them, docs/AGENT.md.)
final class BodyPartsAsTheyPassTests: XCTestCase, @unchecked Sendable {
    private var viewer: RealViewer!
    private var agent: CaptureAgent!

    override func setUpWithError() throws {
        viewer = try RealViewer(path: temporarySocketPath("parts-\(name.filter { $0.isLetter }.suffix(20))"))
        // An app that allows control sends AsyncHTTPClient through the control tunnel.
        agent = try CaptureAgent.start(.init(destination: .unix(path: viewer.path)) { $0.allowsControl = name.contains("ControlTunnel") })
        // The listener asks for version 2 as the agent connects; flows
        // started once the agent writes it stream their parts.
        XCTAssertTrue(eventually { agent.streamsBodyParts }, "the agent never switched to version 2")
    }

    override func tearDown() {
        agent?.stop()
        viewer?.stop()
    }

    /// The viewer's flow for the request whose URL ends with `suffix`, as its store holds it.
    private func viewerFlow(_ suffix: String) -> @Sendable () -> NetworkLog? {
        { [viewer] in viewer!.flow(urlSuffix: suffix) }
    }

    private func sessionConfiguration(captured: Bool) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 60
        configuration.urlCache = nil
        if captured { agent.capture(configuration) }
        return configuration
    }

    #if AsyncHTTPClient
    /// AsyncHTTPClient's async API reading a Python SSE source.
    func testAsyncHTTPClientReadingServerSentEventsSeesEachPartAsTheViewerDoes() async throws {
        try await asyncHTTPClientLockstep()
    }

    /// The same through the control tunnel of an app that allows control:
    /// the tunnel passes each part on as it comes, holding none back.
    func testAsyncHTTPClientThroughTheControlTunnelSeesEachPartAsTheViewerDoes() async throws {
        XCTAssertTrue(agent.allowsControl)
        try await asyncHTTPClientLockstep()
    }

    private func asyncHTTPClientLockstep() async throws {
        var runs: [LockstepRun] = []
        for captured in [false, true] {
            let source = try PythonSSESource()
            defer { source.stop() }
            var configuration = HTTPClient.Configuration()
            if captured { agent.capture(&configuration) }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let text = NIOLockedValueBox("")
            let reader = Task {
                let response = try await client.execute(HTTPClientRequest(url: source.url + "?captured=\(captured)"), timeout: .seconds(60))
                for try await chunk in response.body { text.withLockedValue { $0 += String(buffer: chunk) } }
            }
            runs.append(await runLockstep(source: source, appText: { text.withLockedValue { $0 } },
                                          viewerFlow: captured ? viewerFlow("?captured=true") : nil))
            try await reader.value
            try await client.shutdown()
        }
        XCTAssertEqual(runs[1].appTextAtStep, runs[0].appTextAtStep, "the app saw the stream otherwise with capture")
        XCTAssertTrue(eventually { viewerFlow("?captured=true")()?.state.isFinal == true })
        assertStreamedFlow(viewerFlow("?captured=true")())
    }
    #endif

    /// URLSession with a data delegate (the re-sent path), reading a Python SSE source.
    func testURLSessionDataDelegateReadingServerSentEventsSeesEachPartAsTheViewerDoes() async throws {
        var runs: [LockstepRun] = []
        for captured in [false, true] {
            let source = try PythonSSESource()
            defer { source.stop() }
            let delegate = StreamingDataDelegate()
            let session = URLSession(configuration: sessionConfiguration(captured: captured), delegate: delegate, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            session.dataTask(with: URL(string: source.url + "?session=\(captured)")!).resume()
            runs.append(await runLockstep(source: source, appText: { delegate.text },
                                          viewerFlow: captured ? viewerFlow("?session=true") : nil))
            let completed = await waitUntil(timeout: 20) { delegate.completed }
            XCTAssertTrue(completed)
        }
        XCTAssertEqual(runs[1].appTextAtStep, runs[0].appTextAtStep, "the app saw the stream otherwise with capture")
        XCTAssertTrue(eventually { viewerFlow("?session=true")()?.state.isFinal == true })
        assertStreamedFlow(viewerFlow("?session=true")())
    }

    #if Hummingbird
    /// A Hummingbird route streaming SSE out, read by curl.
    func testHummingbirdRouteStreamingServerSentEventsToCurlShowsEachPartAsItGoes() async throws {
        var runs: [LockstepRun] = []
        for captured in [false, true] {
            let gate = StepGate()
            let service = try await HummingbirdScenarioService.start(captureInto: captured ? agent : nil) { router in
                router.get("events") { _, _ in
                    Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
                        for index in 0 ..< SSEEvents.count {
                            await gate.wait(for: index)
                            try await writer.write(ByteBuffer(string: SSEEvents.event(index)))
                        }
                        await gate.wait(for: SSEEvents.count)
                        try await writer.finish(nil)
                    })
                }
            }
            let curl = try CurlReader(url: "http://127.0.0.1:\(service.port)/events?curl=\(captured)")
            runs.append(await runLockstep(source: gate, appText: { curl.text },
                                          viewerFlow: captured ? viewerFlow("?curl=\(captured)") : nil))
            curl.wait()
            await service.stop()
        }
        XCTAssertEqual(runs[1].appTextAtStep, runs[0].appTextAtStep, "curl saw the stream otherwise with capture")
        XCTAssertTrue(eventually { viewerFlow("?curl=true")()?.state.isFinal == true })
        assertStreamedFlow(viewerFlow("?curl=true")())
    }
    #endif

}

/// A session data delegate that keeps the text it was given and whether the task completed.
private final class StreamingDataDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let state = NIOLockedValueBox((text: "", completed: false))

    var text: String { state.withLockedValue { $0.text } }
    var completed: Bool { state.withLockedValue { $0.completed } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLockedValue { $0.text += String(decoding: data, as: UTF8.self) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLockedValue { $0.completed = true }
    }
}

/// `curl -sN URL`, its output in a file read as it grows.
private final class CurlReader: @unchecked Sendable {
    private let process = Process()
    private let path = NSTemporaryDirectory() + "netinspect-curl-\(UUID().uuidString)"

    init(url: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sN", "--max-time", "60", url]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try process.run()
    }

    var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    func wait() {
        process.waitUntilExit()
        unlink(path)
    }
}
