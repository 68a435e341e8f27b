import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Replay: a viewer asks the agent to send a flow's request again. The
/// agent sends what the app sent (credentials included, which the log
/// redacts), as a new flow that says which flow it replays, without the
/// app's delegates; an app that did not allow control ignores the ask.
final class ReplayTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!
    private var inspector: TestInspector!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
        inspector = try TestInspector(path: temporarySocketPath("replay-\(name.filter { $0.isLetter }.suffix(20))"))
    }

    override func tearDown() {
        inspector?.kill()
        server?.shutdown()
    }

    /// The tasks the app's delegate heard complete, in the order it heard
    /// them: the session's delegate queue is serial.
    private final class CountingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        let completed = Locked<[String]>([])
        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            completed.withLock { $0.append(task.originalRequest?.url?.query ?? "") }
        }
    }

    /// Sends a request with no completion handler on the app's session and
    /// waits until its delegate hears it complete: whatever the delegate was
    /// told before it was sent has been heard by then.
    private func probe(_ query: String, on session: URLSession, delegate: CountingDelegate) {
        session.dataTask(with: server.url("/text?\(query)")).resume()
        XCTAssertTrue(eventually { delegate.completed.current.contains(query) }, "the probe \(query) completed")
    }

    private func run(allowsControl: Bool) throws -> (agent: CaptureAgent, session: URLSession, delegate: CountingDelegate, original: NetworkLog) {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            $0.allowsControl = allowsControl
            $0.initialConnectionWait = 2
        })
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        let delegate = CountingDelegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        var request = URLRequest(url: server.url("/text?replay=1"))
        request.httpMethod = "POST"
        request.httpBody = Data("order=7".utf8)
        request.setValue("Bearer s3cret", forHTTPHeaderField: "Authorization")
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { _, _, _ in done.signal() }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(eventually { self.inspector.finishedFlows(urlSuffix: "/text?replay=1").count == 1 })
        let original = try XCTUnwrap(inspector.finishedFlows(urlSuffix: "/text?replay=1").first)
        return (agent, session, delegate, original)
    }

    func testAReplaySendsTheAppsRequestAgainAsANewFlowAndTheLogStaysRedacted() throws {
        let (agent, session, delegate, original) = try run(allowsControl: true)
        defer { agent.stop() }
        XCTAssertEqual(original.request.headers.first("Authorization"), "<redacted>")
        let callbacksBefore = delegate.completed.current

        inspector.write(ViewerMessage.replay(original.id).frame(), toConnection: 0)
        XCTAssertTrue(eventually { self.server.requests.count == 2 }, "the replay reached the server")
        let (first, again) = (server.requests[0], server.requests[1])
        XCTAssertEqual(again.method, "POST")
        XCTAssertEqual(again.uri, first.uri)
        XCTAssertEqual(first.body, Array("order=7".utf8))
        XCTAssertEqual(again.body, Array("order=7".utf8))
        XCTAssertEqual(again.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret",
                       "the replay carries the credentials the log redacts")

        XCTAssertTrue(eventually { self.inspector.finishedFlows(urlSuffix: "/text?replay=1").count == 2 })
        let replayed = try XCTUnwrap(inspector.finishedFlows(urlSuffix: "/text?replay=1").first { $0.id != original.id })
        XCTAssertEqual(replayed.changes?.replayOf, original.id)
        XCTAssertEqual(replayed.request.headers.first("Authorization"), "<redacted>", "the replay's log is redacted too")
        XCTAssertEqual(replayed.response?.statusCode, 200)
        // The replay has finished; a callback about it would be on the
        // delegate's queue before the probe's.
        probe("after-the-replay", on: session, delegate: delegate)
        XCTAssertEqual(delegate.completed.current, callbacksBefore + ["after-the-replay"], "the app's delegate never hears of the replay")
    }

    func testAnEditedReplaySendsTheEditKeepingRedactedValuesAndSaysItWasEdited() throws {
        let (agent, _, _, original) = try run(allowsControl: true)
        defer { agent.stop() }
        var edited = original.request
        edited.method = "PUT"
        edited.headers.append(HTTPHeader(name: "X-Try", value: "2"))
        edited.body = CapturedBody(data: Data("order=9".utf8))
        XCTAssertEqual(edited.headers.first("Authorization"), "<redacted>")
        inspector.write(ViewerMessage.editedReplay(original.id, edited).frame(), toConnection: 0)

        XCTAssertTrue(eventually { self.server.requests.count == 2 })
        let again = server.requests[1]
        XCTAssertEqual(again.method, "PUT")
        XCTAssertEqual(again.body, Array("order=9".utf8))
        XCTAssertEqual(again.headers.first { $0.name.lowercased() == "x-try" }?.value, "2")
        XCTAssertEqual(again.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret",
                       "the marker stands for the app's own value")
        XCTAssertTrue(eventually { self.inspector.finishedFlows(urlSuffix: "/text?replay=1").count == 2 })
        let replayed = try XCTUnwrap(inspector.finishedFlows(urlSuffix: "/text?replay=1").first { $0.id != original.id })
        XCTAssertEqual(replayed.changes?.replayOf, original.id)
        XCTAssertEqual(replayed.changes?.edited, [.request])
        XCTAssertEqual(replayed.request.method, "PUT")
    }

    func testAnAppThatDidNotAllowControlIgnoresAReplay() throws {
        let (agent, session, delegate, original) = try run(allowsControl: false)
        defer { agent.stop() }
        inspector.write(ViewerMessage.replay(original.id).frame(), toConnection: 0)
        inspector.write(Receipt(events: 1).frame(), toConnection: 0)
        // Read, the replay was skipped; a replay sent then would reach the
        // server before a request the app sends now.
        inspector.waitUntilRead(by: agent)
        probe("after-the-replay", on: session, delegate: delegate)
        XCTAssertEqual(server.requests.map(\.uri), ["/text?replay=1", "/text?after-the-replay"])
        XCTAssertTrue(agent.isConnected, "the unknown message was skipped, not an error")
        XCTAssertEqual(agent.replays.count, 0, "nothing is kept without control")
    }

    func testTheBufferKeepsTheNewestWithinItsBounds() throws {
        let buffer = ReplayBuffer(limits: .init(requests: 2, bytes: 10))
        let sender = URLSessionReplay(template: URLRequest(url: server.url("/a")), configuration: .default, replays: buffer)
        func request(_ body: Data) -> ExchangeRequest { ExchangeRequest(method: "POST", url: server.url("/a"), headers: [], body: body) }
        let ids = (0..<3).map { _ in FlowID() }
        for id in ids { buffer.remember(id, request: request(Data("12345".utf8)), sender: sender) }
        XCTAssertEqual(buffer.count, 2)
        buffer.remember(FlowID(), request: request(Data(count: 11)), sender: sender)
        XCTAssertEqual(buffer.count, 2, "a body over the byte bound is not kept")
        buffer.remember(FlowID(), request: request(Data("1234567".utf8)), sender: sender)
        XCTAssertEqual(buffer.count, 1, "the oldest go to keep the bytes within bound")
        buffer.remember(FlowID(), request: ExchangeRequest(method: "PUT", url: server.url("/a"), headers: [], bodyStreams: true), sender: sender)
        XCTAssertEqual(buffer.count, 1, "a streamed body is not kept")
    }
}
