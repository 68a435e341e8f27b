import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Breakpoints, as an app and a server see them: a real loopback server, a
/// real URLSession app, and a socket inspector that sends the viewer's
/// `intercept`, `resume` and `kill` frames.
final class BreakpointTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!
    private var inspector: TestInspector!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
        inspector = try TestInspector(path: temporarySocketPath("bp-\(name.filter { $0.isLetter }.suffix(20))"))
    }

    override func tearDown() {
        inspector?.kill()
        server?.shutdown()
    }

    /// What the app observed of one task.
    private struct Outcome: @unchecked Sendable {
        var data: Data?
        var response: HTTPURLResponse?
        var error: URLError?
        var taskError: URLError?
        var seconds: TimeInterval
    }

    private final class Box: @unchecked Sendable {
        let outcome = Locked<Outcome?>(nil)
    }

    private func start(allowsControl: Bool = true, timeout: TimeInterval = 60, bodyLimit: Int? = nil) throws -> (CaptureAgent, URLSession) {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: inspector.path)) {
            if let bodyLimit { $0.bodyCaptureLimit = bodyLimit }
            $0.allowsControl = allowsControl
            $0.initialConnectionWait = 2
            $0.breakpointTimeout = timeout
        })
        XCTAssertTrue(eventually { agent.isConnected })
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        return (agent, URLSession(configuration: configuration))
    }

    /// Sends the intercept filter and waits until the agent has it.
    private func intercept(_ filter: String, agent: CaptureAgent) {
        inspector.write(ViewerMessage.intercept(filter).frame(), toConnection: 0)
        XCTAssertTrue(eventually { agent.breakpoints.isActive }, "the agent took the filter")
    }

    /// Starts `request` and returns what the app will have observed, once done.
    private func send(_ request: URLRequest, on session: URLSession) -> (URLSessionDataTask, Box, DispatchSemaphore) {
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let started = Date()
        var task: URLSessionDataTask!
        task = session.dataTask(with: request) { data, response, error in
            box.outcome.withLock {
                $0 = Outcome(data: data, response: response as? HTTPURLResponse, error: error as? URLError,
                             taskError: nil, seconds: Date().timeIntervalSince(started))
            }
            done.signal()
        }
        task.resume()
        return (task, box, done)
    }

    /// The paths the server received other than a probe's: a request sent
    /// after the moment in question, on the same session, matching no
    /// breakpoint, and answered. A request that was let through at that
    /// moment would have reached the server before the probe was even sent,
    /// so this proves the window passed where a timed pause would only hope so.
    private func requestsBesidesAProbe(on session: URLSession) -> [String] {
        let probe = "/slow/0?probe"
        let (_, box, done) = send(URLRequest(url: server.url(probe)), on: session)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the probe went through")
        XCTAssertEqual(box.outcome.current?.response?.statusCode, 200, "the probe went through")
        return server.takeRequests().map(\.uri).filter { $0 != probe }
    }

    private func holds(_ phase: HoldPhase) -> [FlowHold] {
        inspector.allMessages.compactMap { if case .held(let hold) = $0, hold.phase == phase { hold } else { nil } }
    }

    private func releases() -> [FlowRelease] {
        inspector.allMessages.compactMap { if case .released(let release) = $0 { release } else { nil } }
    }

    private func request(_ path: String) -> URLRequest {
        var request = URLRequest(url: server.url(path))
        request.httpMethod = "POST"
        request.httpBody = Data("order=7".utf8)
        request.setValue("Bearer s3cret", forHTTPHeaderField: "Authorization")
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        return request
    }

    func testAnEditAtTheRequestAndResponseBreakpointsChangesWhatTheServerAndTheAppGet() throws {
        let (agent, session) = try start()
        defer { agent.stop() }
        intercept("~u /echo", agent: agent)
        let (_, box, done) = send(request("/echo?bp=1"), on: session)

        XCTAssertTrue(eventually { self.holds(.request).count == 1 }, "the request is held")
        let held = try XCTUnwrap(holds(.request).first)
        XCTAssertEqual(held.timeout, 60)
        XCTAssertEqual(requestsBesidesAProbe(on: session), [], "nothing reaches the server while the request is held")
        let logged = try XCTUnwrap(inspector.flows[held.id])
        XCTAssertEqual(logged.request.headers.first("Authorization"), "<redacted>", "the viewer only ever sees the marker")

        // The person edits it as netinspect would send it: the redacted
        // value left alone, a header added, the body and the URL changed.
        var edited = logged.request
        edited.url = server.url("/echo?bp=2").absoluteString
        edited.headers.append(HTTPHeader(name: "X-Edited", value: "yes"))
        edited.body = CapturedBody(data: Data("order=8".utf8))
        inspector.write(ViewerMessage.resume(FlowResume(id: held.id, request: edited)).frame(), toConnection: 0)

        XCTAssertTrue(eventually { self.server.requests.count == 1 })
        let received = server.requests[0]
        XCTAssertEqual(received.uri, "/echo?bp=2")
        XCTAssertEqual(received.body, Array("order=8".utf8))
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-edited" }?.value, "yes")
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret",
                       "a redacted value left as it was keeps the app's own")

        XCTAssertTrue(eventually { self.holds(.response).count == 1 }, "the response is held too: the filter matches it")
        XCTAssertNil(box.outcome.current, "the app has not seen the response")
        let heldResponse = try XCTUnwrap(holds(.response).first?.response)
        XCTAssertEqual(heldResponse.statusCode, 200)
        XCTAssertEqual(heldResponse.body?.data, Data("order=8".utf8))
        var answer = heldResponse
        answer.statusCode = 201
        answer.headers.append(HTTPHeader(name: "X-From", value: "breakpoint"))
        answer.body = CapturedBody(data: Data("edited".utf8))
        inspector.write(ViewerMessage.resume(FlowResume(id: held.id, response: answer)).frame(), toConnection: 0)

        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        let outcome = try XCTUnwrap(box.outcome.current)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.response?.statusCode, 201)
        XCTAssertEqual(outcome.response?.value(forHTTPHeaderField: "X-From"), "breakpoint")
        XCTAssertEqual(outcome.response?.value(forHTTPHeaderField: "Content-Length"), "6", "the length fits the edited body")
        XCTAssertEqual(outcome.data, Data("edited".utf8))

        XCTAssertTrue(eventually { self.inspector.flows[held.id]?.state == .completed })
        let flow = try XCTUnwrap(inspector.flows[held.id])
        XCTAssertEqual(flow.request.url, server.url("/echo?bp=2").absoluteString, "the log shows what was sent")
        XCTAssertEqual(flow.changes?.originalURL, server.url("/echo?bp=1").absoluteString)
        XCTAssertEqual(flow.changes?.edited, [.request, .response])
        XCTAssertEqual(flow.changes?.originalResponse?.statusCode, 200)
        XCTAssertEqual(flow.response?.statusCode, 201, "and what the app got")
        XCTAssertEqual(flow.response?.body?.data, Data("edited".utf8))
        XCTAssertEqual(flow.request.headers.first("Authorization"), "<redacted>")
        XCTAssertEqual(releases().map(\.reason), [.resumed, .resumed])
    }

    func testKillGivesTheAppACancellationAndTheServerNothing() throws {
        let (agent, session) = try start()
        defer { agent.stop() }
        intercept("~u /text", agent: agent)
        let (task, box, done) = send(request("/text?kill=1"), on: session)
        XCTAssertTrue(eventually { self.holds(.request).count == 1 })
        let id = try XCTUnwrap(holds(.request).first?.id)
        inspector.write(ViewerMessage.kill(id).frame(), toConnection: 0)

        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.outcome.current?.error?.code, .cancelled)
        XCTAssertEqual((task.error as? URLError)?.code, .cancelled, "task.error says cancelled too")
        XCTAssertTrue(eventually { task.state == .completed }, "corelibs marks it completed right after the handler")
        XCTAssertEqual(server.requests.count, 0)
        XCTAssertTrue(eventually { self.inspector.flows[id]?.state == .cancelled })
        XCTAssertEqual(releases().map(\.reason), [.killed])
    }

    func testTheViewerGoingAwayLetsAHeldRequestGoOnUnmodifiedWithinASecond() throws {
        let (agent, session) = try start()
        defer { agent.stop() }
        intercept("~u /echo", agent: agent)
        let (_, box, done) = send(request("/echo?gone=1"), on: session)
        XCTAssertTrue(eventually { self.holds(.request).count == 1 })
        let killed = Date()
        inspector.kill()

        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        let elapsed = Date().timeIntervalSince(killed)
        // The agent notices a dead viewer within its idle check (0.2 s); the
        // margin is for a loaded machine, the figure goes to the log.
        print("held request went on \(String(format: "%.3f", elapsed)) s after the viewer died")
        XCTAssertLessThan(elapsed, 1.5)
        XCTAssertEqual(box.outcome.current?.response?.statusCode, 200)
        XCTAssertEqual(box.outcome.current?.data, Data("order=7".utf8), "unmodified")
        XCTAssertEqual(server.requests.first?.headers.first { $0.name.lowercased() == "authorization" }?.value, "Bearer s3cret")
        XCTAssertFalse(agent.breakpoints.isActive, "the breakpoints went with the viewer")
    }

    func testAHoldNobodyAnswersGoesOnAfterTheTimeout() throws {
        let (agent, session) = try start(timeout: 0.5)
        defer { agent.stop() }
        intercept("~u /echo", agent: agent)
        let (_, box, done) = send(request("/echo?timeout=1"), on: session)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.outcome.current?.response?.statusCode, 200)
        XCTAssertEqual(box.outcome.current?.data, Data("order=7".utf8))
        XCTAssertGreaterThanOrEqual(box.outcome.current?.seconds ?? 0, 1.0, "held twice (request, response), 0.5 s each")
        XCTAssertTrue(eventually { self.releases().count == 2 })
        XCTAssertEqual(releases().map(\.reason), [.timeout, .timeout])
        XCTAssertEqual(agent.breakpoints.heldCount, 0)
    }

    func testTheAppCancellingAHeldTaskEndsTheHold() throws {
        let (agent, session) = try start()
        defer { agent.stop() }
        intercept("~u /text", agent: agent)
        let (task, box, done) = send(request("/text?cancel=1"), on: session)
        XCTAssertTrue(eventually { self.holds(.request).count == 1 })
        let id = try XCTUnwrap(holds(.request).first?.id)
        task.cancel()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.outcome.current?.error?.code, .cancelled)
        XCTAssertTrue(eventually { self.releases().map(\.reason) == [.cancelled] })
        XCTAssertTrue(eventually { self.inspector.flows[id]?.state == .cancelled })
        XCTAssertEqual(agent.breakpoints.heldCount, 0)
        XCTAssertEqual(requestsBesidesAProbe(on: session), [], "a cancelled held request is never sent")
    }

    func testOnlyResponsesWithTildeSAndOneTooLargeToHoldGoesOnUnheld() throws {
        let (agent, session) = try start(bodyLimit: 1000)
        defer { agent.stop() }
        intercept("~u /binary & ~s", agent: agent)
        let (_, box, done) = send(URLRequest(url: server.url("/binary/50000")), on: session)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.outcome.current?.data, Data(TestHTTPServer.pattern(count: 50_000)), "every byte, in order")
        XCTAssertEqual(holds(.request).count, 0, "~s: the request was not held")
        XCTAssertEqual(holds(.response).count, 0, "a body over the capture limit is not held back")

        let (_, small, smallDone) = send(URLRequest(url: server.url("/binary/500")), on: session)
        XCTAssertTrue(eventually { self.holds(.response).count == 1 }, "a small one is")
        inspector.write(ViewerMessage.resume(FlowResume(id: try XCTUnwrap(holds(.response).first?.id))).frame(), toConnection: 0)
        XCTAssertEqual(smallDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(small.outcome.current?.data, Data(TestHTTPServer.pattern(count: 500)))
    }

    func testFlowsTheFilterDoesNotMatchAreNeverHeld() throws {
        let (agent, session) = try start()
        defer { agent.stop() }
        intercept("~u /nothing-like-this", agent: agent)
        let (_, box, done) = send(request("/echo?free=1"), on: session)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.outcome.current?.data, Data("order=7".utf8))
        XCTAssertEqual(holds(.request).count + holds(.response).count, 0)
    }

    func testAnAppThatDidNotOptInIsNeverHeld() throws {
        let (agent, session) = try start(allowsControl: false)
        defer { agent.stop() }
        inspector.write(ViewerMessage.intercept("~u /echo").frame(), toConnection: 0)
        inspector.write(Receipt(events: 0).frame(), toConnection: 0)
        inspector.waitUntilRead(by: agent)
        XCTAssertFalse(agent.breakpoints.isActive)
        let (_, box, done) = send(request("/echo?plain=1"), on: session)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.outcome.current?.data, Data("order=7".utf8))
        XCTAssertEqual(holds(.request).count, 0)
    }

    /// A hostile viewer answering flows that are not held (or twice) changes nothing.
    func testAnswersForFlowsThatAreNotHeldAreIgnored() throws {
        let (agent, session) = try start()
        defer { agent.stop() }
        intercept("~u /echo", agent: agent)
        let (_, box, done) = send(request("/echo?twice=1"), on: session)
        XCTAssertTrue(eventually { self.holds(.request).count == 1 })
        let id = try XCTUnwrap(holds(.request).first?.id)
        inspector.write(ViewerMessage.kill(FlowID()).frame(), toConnection: 0)
        inspector.write(ViewerMessage.resume(FlowResume(id: FlowID())).frame(), toConnection: 0)
        inspector.write(ViewerMessage.resume(FlowResume(id: id)).frame(), toConnection: 0)
        XCTAssertTrue(eventually { self.holds(.response).count == 1 })
        inspector.write(ViewerMessage.resume(FlowResume(id: id)).frame(), toConnection: 0)
        inspector.write(ViewerMessage.kill(id).frame(), toConnection: 0)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertNil(box.outcome.current?.error, "the second answer found nothing held")
        XCTAssertEqual(box.outcome.current?.data, Data("order=7".utf8))
        XCTAssertTrue(eventually { self.releases().count == 2 })
        // A third release would be sent as the agent reads the answers that
        // came too late, before any event of a flow that starts after that.
        inspector.waitUntilRead(by: agent)
        let (_, _, probeDone) = send(URLRequest(url: server.url("/slow/0?after")), on: session)
        XCTAssertEqual(probeDone.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(eventually { self.inspector.finishedFlows(urlSuffix: "/slow/0?after").count == 1 }, "the later flow arrived")
        XCTAssertEqual(releases().map(\.reason), [.resumed, .resumed])
    }
}
