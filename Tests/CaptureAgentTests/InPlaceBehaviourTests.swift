import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// What an app observes of its own tasks, written down line by line, once
/// without and once with the agent: the two transcripts must be identical,
/// and the agent must have captured these tasks in place (never re-sent).
final class InPlaceBehaviourTests: AgentTestCase, @unchecked Sendable {
    // MARK: - Downloads

    func testDownloadWithACompletionHandler() async throws {
        let url = server.url("/binary/300000?download=completion")
        try await assertSameBehaviour("download, completion handler") { session in
            await withCheckedContinuation { continuation in
                let box = Locked<URLSessionTask?>(nil)
                let task = session.downloadTask(with: url) { location, response, error in
                    // Apple deletes the file when this handler returns; corelibs
                    // leaves it (see the delegate test), so the app removes it.
                    defer { location.map { try? FileManager.default.removeItem(at: $0) } }
                    var lines = [Self.describeFile(location), Self.describe(response), Self.describe(error)]
                    if let task = box.current { lines.append(Self.counters(task)) }
                    continuation.resume(returning: lines)
                }
                box.withLock { $0 = task }
                task.resume()
            }
        }
        try assertDownloadLogged(urlSuffix: "download=completion", size: 300_000)
    }

    func testDownloadWithASessionDelegate() async throws {
        let url = server.url("/binary/300000?download=delegate")
        let lines = try await assertSameBehaviour("download, delegate", delegate: { DownloadRecorder() }) { session in
            let recorder = try XCTUnwrap(session.delegate as? DownloadRecorder)
            let task = session.downloadTask(with: url)
            task.resume()
            let lines = await recorder.finished()
            return lines + [Self.describe(task.response), Self.counters(task), Self.settledState(task), Self.describe(task.error)]
        }
        // Pinned: corelibs never deletes a download's file in
        // NSTemporaryDirectory (NativeProtocol's tempFileURL), where Apple
        // deletes it once didFinishDownloadingTo returns; the agent leaves it
        // so too, and an app on Linux must remove it or fill /tmp.
        XCTAssertTrue(lines.contains(DownloadRecorder.fileLeftAfterwards), "\(lines)")
        try assertDownloadLogged(urlSuffix: "download=delegate", size: 300_000)
    }

    func testDownloadWithAsyncAwait() async throws {
        let url = server.url("/binary/70000?download=async")
        try await assertSameBehaviour("download(from:)") { session in
            let (location, response) = try await session.download(from: url)
            defer { try? FileManager.default.removeItem(at: location) }
            return [Self.describeFile(location), Self.describe(response)]
        }
        try assertDownloadLogged(urlSuffix: "download=async", size: 70000)
    }

    /// The inspector gets the download like any other flow: status, headers
    /// and the first `bodyCaptureLimit` bytes of the file.
    private func assertDownloadLogged(urlSuffix: String, size: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: urlSuffix).last; return log != nil }, file: file, line: line)
        let flow = try XCTUnwrap(log, file: file, line: line)
        XCTAssertEqual(flow.state, .completed, file: file, line: line)
        XCTAssertEqual(flow.response?.statusCode, 200, file: file, line: line)
        XCTAssertEqual(flow.response?.headers.values(for: "Content-Length"), [String(size)], file: file, line: line)
        XCTAssertEqual(flow.response?.body?.size, size, file: file, line: line)
        XCTAssertEqual(flow.response?.body?.data, Data(TestHTTPServer.pattern(count: min(size, agent.configuration.bodyCaptureLimit))), file: file, line: line)
    }

    // MARK: - Task state

    func testTheFourByteCountersOfAnUploadAndAGet() async throws {
        let body = Data(TestHTTPServer.pattern(count: 100_000))
        try await assertSameBehaviour("byte counters") { session in
            var lines: [String] = []
            for (path, upload) in [("/echo?counters", Optional(body)), ("/binary/5000?counters", nil)] {
                var request = URLRequest(url: self.server.url(path))
                if upload != nil { request.httpMethod = "POST" }
                let task: URLSessionTask = await withCheckedContinuation { continuation in
                    let box = Locked<URLSessionTask?>(nil)
                    let handler: @Sendable (Data?, URLResponse?, Error?) -> Void = { _, _, _ in continuation.resume(returning: box.current!) }
                    let task = upload.map { session.uploadTask(with: request, from: $0, completionHandler: handler) }
                        ?? session.dataTask(with: request, completionHandler: handler)
                    box.withLock { $0 = task }
                    task.resume()
                }
                lines.append("\(path) " + Self.counters(task))
            }
            return lines
        }
    }

    func testCurrentRequestAndResponseAfterARedirect() async throws {
        try await assertSameBehaviour("redirect") { session in
            let original = self.server.url("/redirect/302?to=/text")
            let (task, data): (URLSessionTask, Data?) = await withCheckedContinuation { continuation in
                let box = Locked<URLSessionTask?>(nil)
                let task = session.dataTask(with: original) { data, _, _ in continuation.resume(returning: (box.current!, data)) }
                box.withLock { $0 = task }
                task.resume()
            }
            return [
                "original: \(task.originalRequest?.url?.absoluteString ?? "nil")",
                "current: \(task.currentRequest?.url?.absoluteString ?? "nil")",
                Self.describe(task.response),
                "body: \(data?.count ?? -1)",
            ]
        }
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "/redirect/302?to=/text").last; return log != nil })
        XCTAssertEqual(log?.redirects, [RedirectHop(statusCode: 302, from: server.url("/redirect/302?to=/text").absoluteString, to: server.url("/text").absoluteString)])
        XCTAssertEqual(log?.response?.statusCode, 200)
    }

    func testTaskErrorAfterARefusedConnection() async throws {
        let closed = try TestHTTPServer()
        let url = closed.url("/text?refused")
        closed.shutdown()
        try await assertSameBehaviour("refused") { session in
            let (task, error): (URLSessionTask, Error?) = await withCheckedContinuation { continuation in
                let box = Locked<URLSessionTask?>(nil)
                let task = session.dataTask(with: url) { _, _, error in continuation.resume(returning: (box.current!, error)) }
                box.withLock { $0 = task }
                task.resume()
            }
            return [Self.describe(error), "task.error: " + Self.describe(task.error), Self.settledState(task)]
        }
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "refused").last; return log != nil })
        XCTAssertEqual(log?.state, .failed)
        XCTAssertEqual(log?.error?.code, NSURLErrorCannotConnectToHost)
    }

    func testDidSendBodyDataReachesASessionDelegate() async throws {
        let body = Data(TestHTTPServer.pattern(count: 200_000))
        try await assertSameBehaviour("didSendBodyData, session delegate", delegate: { UploadRecorder() }) { session in
            let recorder = try XCTUnwrap(session.delegate as? UploadRecorder)
            var request = URLRequest(url: self.server.url("/echo?send=session"))
            request.httpMethod = "PUT"
            let task = session.uploadTask(with: request, from: body)
            task.resume()
            return await recorder.finished() + [Self.counters(task)]
        }
    }

    func testDidSendBodyDataReachesAnAsyncCallsTaskDelegate() async throws {
        let body = Data(TestHTTPServer.pattern(count: 200_000))
        try await assertSameBehaviour("didSendBodyData, task delegate") { session in
            let recorder = UploadRecorder()
            var request = URLRequest(url: self.server.url("/echo?send=task"))
            request.httpMethod = "POST"
            let (data, response) = try await session.upload(for: request, from: body, delegate: recorder)
            // Delegate calls run on the delegate queue, possibly after the call returned.
            _ = eventually(timeout: 5) { recorder.sentTotal.current == Int64(body.count) }
            return recorder.sendLines() + ["body: \(data == body)", Self.describe(response)]
        }
    }

    func testSuspendAndResume() async throws {
        try await assertSameBehaviour("suspend/resume") { session in
            let (data, response, error, task) = await withCheckedContinuation { continuation in
                let box = Locked<URLSessionTask?>(nil)
                let task = session.dataTask(with: self.server.url("/drip/20?suspend")) { data, response, error in
                    continuation.resume(returning: (data, response, error, box.current!))
                }
                box.withLock { $0 = task }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
                    task.suspend()
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { task.resume() }
                }
            }
            // corelibs may hand over more bytes than were sent after a resume
            // (with or without the agent): only "at least all of it".
            return [Self.describe(response), Self.describe(error), "body complete: \((data?.count ?? 0) >= 20 * 1024)", Self.settledState(task)]
        }
        XCTAssertTrue(eventually { inspector.finishedFlows(urlSuffix: "/drip/20?suspend").first?.state == .completed })
    }

    func testCancel() async throws {
        try await assertSameBehaviour("cancel") { session in
            let (error, task): (Error?, URLSessionTask) = await withCheckedContinuation { continuation in
                let box = Locked<URLSessionTask?>(nil)
                let task = session.dataTask(with: self.server.url("/drip/100?cancel")) { _, _, error in
                    continuation.resume(returning: (error, box.current!))
                }
                box.withLock { $0 = task }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { task.cancel() }
            }
            return [Self.describe(error), "task.error: " + Self.describe(task.error), Self.settledState(task)]
        }
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "/drip/100?cancel").first; return log != nil })
        XCTAssertEqual(log?.state, .cancelled)
        XCTAssertEqual(log?.response?.statusCode, 200, "the head had arrived")
        XCTAssertGreaterThan(log?.response?.body?.size ?? 0, 0, "some of the body had arrived")
    }

    /// corelibs answers the 401 by asking the session delegate, then retries
    /// with a protocol of its own; the agent records both exchanges.
    func testAChallengeAnsweredByTheDelegate() async throws {
        try await assertSameBehaviour("401 answered", delegate: { ChallengeAnswerer() }) { session in
            let answerer = try XCTUnwrap(session.delegate as? ChallengeAnswerer)
            let (data, response, error) = await withCheckedContinuation { continuation in
                session.dataTask(with: self.server.url("/auth?in-place")) { data, response, error in
                    continuation.resume(returning: (data, response, error))
                }.resume()
            }
            return [Self.describe(response), Self.describe(error), "body: \(String(decoding: data ?? Data(), as: UTF8.self))",
                    "challenges: \(answerer.methods.current)"]
        }
        var logs: [NetworkLog] = []
        XCTAssertTrue(eventually { logs = inspector.finishedFlows(urlSuffix: "/auth?in-place"); return logs.count == 2 })
        XCTAssertEqual(logs.map { $0.response?.statusCode }, [401, 200])
        XCTAssertEqual(logs.last?.response?.body?.data, Data("welcome\n".utf8))
        XCTAssertEqual(logs.last?.request.headers.values(for: "Authorization"), ["<redacted>"], "the retry's request, credentials redacted")
    }

    func testCookiesSetByTheServerAreSentBack() async throws {
        try await assertSameBehaviour("cookies") { session in
            var lines: [String] = []
            for path in ["/dup-headers", "/echo?cookies", "/redirect/302?to=/text"] {
                let outcome = await performExchange(URLRequest(url: self.server.url(path)), on: session, style: .completionHandler)
                lines.append("\(path): \(outcome.status ?? 0)")
            }
            let stored = HTTPCookieStorage.shared.cookies(for: self.server.url("/"))?.map { "\($0.name)=\($0.value)" }.sorted() ?? []
            return lines + ["stored: \(stored)"]
        }
        XCTAssertEqual(server.requests.count, 0, "taken by the comparison")
    }

    // MARK: - The re-sending path stays where nothing else sees the body

    func testADataDelegateSessionsDataTaskIsReSent() async throws {
        try await assertSameBehaviour("delegate-style data task", delegate: { RecordingDelegate() }, expectedPath: .resent) { session in
            let outcome = await performExchange(URLRequest(url: self.server.url("/text?delegate-style")), on: session, style: .delegate)
            return [outcome.description]
        }
    }
}

/// Records what a download delegate is told.
private final class DownloadRecorder: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    private let lines = Locked<[String]>([])
    private let written = Locked<(calls: Int, bytes: Int64, total: Int64, expected: Set<Int64>)>((0, 0, 0, []))
    private let outcome = OneShot<[String]>()

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        written.withLock {
            $0.calls += 1
            $0.bytes += bytesWritten
            $0.total = totalBytesWritten
            $0.expected.insert(totalBytesExpectedToWrite)
        }
    }

    private let location = Locked<URL?>(nil)
    static let fileLeftAfterwards = "the file after didFinishDownloadingTo returned: still there"

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let data = FileManager.default.contents(atPath: location.path) ?? Data()
        self.location.withLock { $0 = location }
        lines.withLock {
            $0.append("didFinishDownloadingTo: \(data.count) bytes, pattern \(data == Data(TestHTTPServer.pattern(count: data.count)) ? "ok" : "WRONG")")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let w = written.current
        // Told after didFinishDownloadingTo returned, on the same queue.
        let file = location.current
        let left = file.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
        file.map { try? FileManager.default.removeItem(at: $0) }
        let all = lines.current + [
            left ? Self.fileLeftAfterwards : "the file after didFinishDownloadingTo returned: gone",
            "didWriteData: called=\(w.calls > 0) bytes=\(w.bytes) lastTotal=\(w.total) expected=\(w.expected.sorted())",
            "didCompleteWithError: \((error as NSError?).map { "\($0.domain) \($0.code)" } ?? "nil")",
        ]
        outcome.fulfill(all)
    }

    func finished() async -> [String] {
        await outcome.wait()
    }
}

/// Records `didSendBodyData` (a task delegate, not a data delegate, so a
/// session using it keeps its tasks in place).
private final class UploadRecorder: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    let sentTotal = Locked<Int64>(0)
    private let sent = Locked<(calls: Int, bytes: Int64, expected: Set<Int64>)>((0, 0, []))
    private let outcome = OneShot<[String]>()

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        sent.withLock {
            $0.calls += 1
            $0.bytes += bytesSent
            $0.expected.insert(totalBytesExpectedToSend)
        }
        sentTotal.withLock { $0 = totalBytesSent }
    }

    func sendLines() -> [String] {
        let s = sent.current
        return ["didSendBodyData: called=\(s.calls > 0) bytes=\(s.bytes) lastTotal=\(sentTotal.current) expected=\(s.expected.sorted())"]
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let all = sendLines() + ["didCompleteWithError: \((error as NSError?).map { "\($0.domain) \($0.code)" } ?? "nil")"]
        outcome.fulfill(all)
    }

    func finished() async -> [String] {
        await outcome.wait()
    }
}

/// Answers Basic challenges with user:pass (a task delegate, not a data delegate).
private final class ChallengeAnswerer: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    let methods = Locked<[String]>([])

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        methods.withLock { $0.append(challenge.protectionSpace.authenticationMethod) }
        completionHandler(.useCredential, URLCredential(user: "user", password: "pass", persistence: .none))
    }
}

/// A value delivered once, awaited once.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let state = Locked<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    func fulfill(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard let waiter = state.waiter else {
                state.value = value
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: value)
    }

    func wait() async -> Value {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// What the log says went out, against what the loopback server received.
final class HeadersAsSentTests: AgentTestCase, @unchecked Sendable {
    private func normalized(_ pairs: [(String, String)]) -> [String] {
        pairs.map { "\($0.0.lowercased()): \($0.1)" }.sorted()
    }

    /// The logged request headers (the app's own plus those the client
    /// added) are exactly the fields on the wire, names compared
    /// case-insensitively; the client's own are marked as such.
    func testLoggedHeadersAreTheFieldsOnTheWire() async throws {
        let configuration = sessionConfiguration(captured: true)
        configuration.httpAdditionalHeaders = ["X-Session-Extra": "from the session"]
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        for (index, method) in ["GET", "POST"].enumerated() {
            var request = URLRequest(url: server.url("/echo?headers=\(index)"))
            request.httpMethod = method
            request.setValue("mine", forHTTPHeaderField: "X-API-Key-Name")
            if method == "POST" { request.httpBody = Data("a=1&b=2".utf8) }
            _ = server.takeRequests()
            let outcome = await performExchange(request, on: session, style: .completionHandler)
            XCTAssertEqual(outcome.status, 200)
            let received = try XCTUnwrap(server.takeRequests().first)
            var log: NetworkLog?
            XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "headers=\(index)").first; return log != nil })
            let logged = try XCTUnwrap(log)
            XCTAssertEqual(
                normalized(logged.request.headersAsSent.map { ($0.name, $0.value) }),
                normalized(received.headers.map { ($0.name, $0.value) }),
                "\(method): logged headers vs the server's"
            )
            let added = Set(logged.request.clientHeaders.map { $0.name.lowercased() })
            XCTAssertTrue(added.isSuperset(of: ["host", "user-agent", "accept"]), "\(added)")
            XCTAssertFalse(added.contains("x-api-key-name"), "set by the app, not added by the client")
            XCTAssertFalse(added.contains("x-session-extra"), "the session's additional headers are the app's")
            if method == "POST" {
                XCTAssertTrue(added.isSuperset(of: ["content-length", "content-type"]), "\(added)")
            }
            XCTAssertEqual(logged.source, CaptureSource(client: .urlSession, path: .inPlace))
        }
    }

    /// libcurl's phases of the transfer reach the log, ordered as libcurl
    /// measured them; the gzip body is marked decoded.
    func testPhasesFromLibcurlAndDecodedBodies() async throws {
        let session = URLSession(configuration: sessionConfiguration(captured: true))
        defer { session.finishTasksAndInvalidate() }
        let outcome = await performExchange(URLRequest(url: server.url("/gzip?phases")), on: session, style: .completionHandler)
        XCTAssertEqual(outcome.body, Data(TestHTTPServer.gzipPlain))
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "/gzip?phases").first; return log != nil })
        let flow = try XCTUnwrap(log)
        let phases = try XCTUnwrap(flow.timing.phases, "no phases: libcurl's figures were not read")
        XCTAssertEqual(phases.source, "libcurl")
        XCTAssertNotNil(phases.dns)
        XCTAssertNotNil(phases.connect)
        XCTAssertNotNil(phases.wait)
        XCTAssertNotNil(phases.receive)
        XCTAssertNil(phases.tls, "plain HTTP")
        let total = [phases.blocked, phases.dns, phases.connect, phases.tls, phases.send, phases.wait, phases.receive].compactMap { $0 }.reduce(0, +)
        XCTAssertLessThanOrEqual(total, (flow.timing.finished ?? 0) + 0.001, "the phases fit inside the flow")
        XCTAssertEqual(flow.response?.body?.isDecoded, true)
        XCTAssertEqual(flow.response?.body?.data, Data(TestHTTPServer.gzipPlain))
        XCTAssertEqual(Libcurl.watchedCount, 0, "every watched handle was let go")
    }
}

/// An app's own `URLProtocol` that re-sends every request through a session
/// of its own (the environment switcher of seed 003): it points the request
/// at another path and marks it. Its session's delegate is a small helper
/// that holds it (a `URLProtocol` cannot be a session delegate in Swift 6:
/// delegates are `Sendable`, protocols are not).
final class EnvironmentSwitcher: URLProtocol {
    /// How the app makes its sessions (the agent's `capture(_:)` when it runs).
    nonisolated(unsafe) static var configure: (URLSessionConfiguration) -> Void = { _ in }
    private var relay: Relay?

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.path.hasPrefix("/env/") == true
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        var switched = request
        switched.url = URL(string: request.url!.absoluteString.replacingOccurrences(of: "/env/", with: "/"))
        switched.setValue("staging", forHTTPHeaderField: "X-Environment")
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        Self.configure(configuration)
        let relay = Relay(owner: self)
        self.relay = relay
        let request = switched
        // Not from here: creating a task inside startLoading deadlocks on Linux.
        DispatchQueue.global().async {
            let session = URLSession(configuration: configuration, delegate: relay, delegateQueue: nil)
            relay.session.withLock { $0 = session }
            session.dataTask(with: request).resume()
        }
    }

    override func stopLoading() {
        relay?.session.current?.invalidateAndCancel()
    }

    /// Hands the inner session's callbacks to the protocol's client.
    final class Relay: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        weak var owner: EnvironmentSwitcher?
        let session = Locked<URLSession?>(nil)
        private let body = Locked(Data())

        init(owner: EnvironmentSwitcher) {
            self.owner = owner
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            if let owner { owner.client?.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed) }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            body.withLock { $0.append(data) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            if let owner {
                if let error {
                    owner.client?.urlProtocol(owner, didFailWithError: error)
                } else {
                    owner.client?.urlProtocol(owner, didLoad: body.current)
                    owner.client?.urlProtocolDidFinishLoading(owner)
                }
            }
            session.finishTasksAndInvalidate()
        }
    }
}

final class AppProtocolTests: AgentTestCase, @unchecked Sendable {
    /// The app's protocol still works under the agent, its own session is
    /// captured too, and yet each request appears once in the log.
    func testAnAppsReSendingProtocolIsCapturedOnce() async throws {
        func run(captured: Bool) async -> (AppOutcome, [ReceivedRequest]) {
            EnvironmentSwitcher.configure = captured ? { [agent] in agent!.capture($0) } : { _ in }
            let configuration = sessionConfiguration(captured: false)
            configuration.protocolClasses = [EnvironmentSwitcher.self] + (configuration.protocolClasses ?? [])
            if captured { agent.capture(configuration) }
            let session = URLSession(configuration: configuration)
            defer { session.finishTasksAndInvalidate() }
            _ = server.takeRequests()
            var request = URLRequest(url: server.url("/env/echo?switched"))
            request.httpMethod = "POST"
            request.httpBody = Data("through the app's protocol".utf8)
            let outcome = await performExchange(request, on: session, style: .completionHandler)
            return (outcome, server.takeRequestsOnceArrived())
        }
        let (expected, expectedRequests) = await run(captured: false)
        let before = agent.capturePaths
        let (actual, actualRequests) = await run(captured: true)
        let after = agent.capturePaths
        EnvironmentSwitcher.configure = { _ in }
        XCTAssertEqual(expected.status, 200)
        XCTAssertEqual(expected.body, Data("through the app's protocol".utf8))
        XCTAssertEqual(expectedRequests.first?.uri, "/echo?switched", "the app's protocol switched the path")
        XCTAssertEqual(actual, expected)
        XCTAssertEqual(actualRequests, expectedRequests)
        XCTAssertEqual(after.inPlace - before.inPlace, 1, "the app's task, observed through its protocol")
        XCTAssertEqual(after.duplicates - before.duplicates, 1, "the protocol's own re-send, let through")
        XCTAssertEqual(after.resent - before.resent, 0)
        // A second flow for the exchange would reach the inspector before the
        // flow of a request the app makes after it.
        let later = URLSession(configuration: sessionConfiguration(captured: true))
        defer { later.finishTasksAndInvalidate() }
        _ = await performExchange(URLRequest(url: server.url("/text?after-the-switch")), on: later, style: .completionHandler)
        XCTAssertTrue(eventually { self.inspector.finishedFlows(urlSuffix: "/text?after-the-switch").count == 1 })
        let flows = inspector.flows.values.filter { $0.request.url.hasSuffix("echo?switched") }
        XCTAssertEqual(flows.count, 1, "\(flows.map(\.request.url))")
        XCTAssertEqual(flows.first?.response?.body?.data, Data("through the app's protocol".utf8))
        XCTAssertEqual(flows.first?.request.body?.data, Data("through the app's protocol".utf8))
    }
}
