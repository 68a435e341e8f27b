import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import CaptureAgent

/// The byte counters (and `currentRequest`) of tasks the agent re-sends (a
/// session with a data delegate, a body from a stream), as the app reads
/// them: inside its delegate's calls and at completion, compared without
/// and with the agent (issue 24 item 4).
///
/// `progress` is not in the transcripts: corelibs recomputes it from the
/// counters in blocks queued on the task's work queue, and whether the last
/// one runs before or after the task is marked completed is a race inside
/// corelibs (a 404 ends at 1/1 or 0/-1 without the agent, run to run). What
/// the agent does for it, running that same recompute after each counter it
/// writes, is pinned by `testProgressIsRecomputedFromTheCountersTheAgentWrites`.
final class ResentCountersTests: AgentTestCase, @unchecked Sendable {
    private func assertSameCounters(
        _ name: String, refusingRedirects: Bool = false, file: StaticString = #filePath, line: UInt = #line,
        _ scenario: @escaping (URLSession, CounterRecorder) async throws -> [String]
    ) async throws {
        try await assertSameBehaviour(name, delegate: { CounterRecorder(refusesRedirects: refusingRedirects) }, expectedPath: .resent,
                                      file: file, line: line) { session in
            try await scenario(session, XCTUnwrap(session.delegate as? CounterRecorder))
        }
    }

    func testADelegateStyleDataTaskDownloading100000Bytes() async throws {
        try await assertSameCounters("delegate-style download") { session, recorder in
            var lines: [String] = []
            for path in ["/binary/100000?counters=get", "/gzip?counters=get"] {
                lines += await recorder.run(session.dataTask(with: self.server.url(path)))
            }
            return lines
        }
    }

    func testASessionDelegateUploadOf200000Bytes() async throws {
        let body = Data(TestHTTPServer.pattern(count: 200_000))
        try await assertSameCounters("session-delegate upload") { session, recorder in
            var request = URLRequest(url: self.server.url("/echo?counters=upload"))
            request.httpMethod = "PUT"
            return await recorder.run(session.uploadTask(with: request, from: body))
        }
    }

    /// A body read from a stream is re-sent whoever consumes the response:
    /// here a session delegate, then a completion handler.
    func testAnUploadFromAStream() async throws {
        let body = Data(TestHTTPServer.pattern(count: 150_000))
        try await assertSameCounters("upload from a stream") { session, recorder in
            var request = URLRequest(url: self.server.url("/echo?counters=stream"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: body)
            let lines = await recorder.run(session.dataTask(with: request))
            request.httpBodyStream = InputStream(data: body)
            let streamed = request
            let (task, received): (URLSessionTask, Int) = await withCheckedContinuation { continuation in
                let box = Locked<URLSessionTask?>(nil)
                let task = session.dataTask(with: streamed) { data, _, _ in continuation.resume(returning: (box.current!, data?.count ?? -1)) }
                box.withLock { $0 = task }
                task.resume()
            }
            return lines + ["completion handler: \(received) bytes", Self.settledState(task), Self.counters(task)]
        }
    }

    /// `data(for:delegate:)` with a body stream: corelibs tells the call's
    /// task delegate about the bytes sent, and counts them.
    func testAnAsyncCallWithATaskDelegateUploadingFromAStream() async throws {
        let body = Data(TestHTTPServer.pattern(count: 150_000))
        try await assertSameBehaviour("async upload from a stream", expectedPath: .resent) { session in
            let recorder = CounterRecorder(refusesRedirects: false)
            var request = URLRequest(url: self.server.url("/echo?counters=async-stream"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: body)
            let (data, _) = try await session.data(for: request, delegate: recorder)
            // Delegate calls run on the delegate queue, possibly after the call returned.
            _ = eventually(timeout: 5) { recorder.sentTotal.current == Int64(body.count) }
            return ["body: \(data == body)", recorder.lastSendLine.current, recorder.lastSendCounters.current]
        }
    }

    func testCountersAfterARedirect() async throws {
        try await assertSameCounters("redirect, followed") { session, recorder in
            await recorder.run(session.dataTask(with: self.server.url("/redirect/302?to=/binary/100000%3Fcounters=redirected")))
        }
        try await assertSameCounters("redirect, refused", refusingRedirects: true) { session, recorder in
            await recorder.run(session.dataTask(with: self.server.url("/redirect/302?to=/binary/100000%3Fcounters=refused")))
        }
    }

    func testCountersOfA404() async throws {
        try await assertSameCounters("404") { session, recorder in
            await recorder.run(session.dataTask(with: self.server.url("/nowhere?counters=404")))
        }
    }
}

extension ResentCountersTests {
    /// What the agent relies on, pinned: the fields it writes are the ones
    /// the public getters read (the four counters, `currentRequest`), and setting `countOfBytesClientExpectsToReceive`
    /// to its own value makes corelibs recompute `progress` from them (with
    /// corelibs' own formula: sent + received of the body length plus the
    /// client's expectation, -1 unless the app set one).
    func testProgressIsRecomputedFromTheCountersTheAgentWrites() throws {
        XCTAssertTrue(ResentTaskFields.shared.isComplete, "a corelibs counter field is missing or not Int64")
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.uploadTask(with: URLRequest(url: server.url("/echo?never-resumed")), from: Data(count: 100))
        XCTAssertEqual(Self.counters(task), "counters: received=0 expectedToReceive=0 sent=0 expectedToSend=0")
        ResentTaskFields.shared.setExpectedToSend(100, on: task)
        ResentTaskFields.shared.setExpectedToReceive(50, on: task)
        ResentTaskFields.shared.setSent(30, on: task)
        XCTAssertEqual(Self.counters(task), "counters: received=0 expectedToReceive=50 sent=30 expectedToSend=100")
        XCTAssertEqual(Self.progress(task), "progress: 0/-1", "a stored field has no observer")
        let unchanged = task.countOfBytesClientExpectsToReceive
        task.countOfBytesClientExpectsToReceive = unchanged
        XCTAssertTrue(eventually(timeout: 5) { task.progress.completedUnitCount == 30 }, Self.progress(task))
        XCTAssertEqual(Self.progress(task), "progress: 30/99")
        XCTAssertEqual(task.countOfBytesClientExpectsToReceive, NSURLSessionTransferSizeUnknown)
        ResentTaskFields.shared.setCurrentRequest(URLRequest(url: server.url("/text?followed")), on: task)
        XCTAssertEqual(task.currentRequest?.url, server.url("/text?followed"))
        XCTAssertEqual(task.originalRequest?.url, server.url("/echo?never-resumed"))
    }
}

/// A session's data delegate that writes down, per task, what the app can
/// read of its counters: in `didReceive response`, in `didSendBodyData`
/// (the totals it is given) and once the task has completed.
final class CounterRecorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Entry {
        var lines: [String] = []
        var received = 0
        var sends = 0
        var sentBytes: Int64 = 0
        var lastTotalSent: Int64 = 0
        var expectedToSend: Set<Int64> = []
        let done = OneShot<[String]>()
    }

    private let entries = Locked<[Int: Entry]>([:])
    let refusesRedirects: Bool

    init(refusesRedirects: Bool) {
        self.refusesRedirects = refusesRedirects
    }

    /// Resumes `task` and returns its transcript once it completed.
    func run(_ task: URLSessionTask) async -> [String] {
        let entry = Entry()
        entries.withLock { $0[task.taskIdentifier] = entry }
        task.resume()
        let lines = await entry.done.wait()
        return lines + [AgentTestCase.settledState(task), AgentTestCase.counters(task),
                        "current: \(task.currentRequest?.url?.absoluteString ?? "nil")"]
    }

    private func note(_ task: URLSessionTask, _ change: (inout Entry) -> Void) {
        entries.withLock { change(&$0[task.taskIdentifier, default: Entry()]) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        let line = "redirect \(response.statusCode): " + AgentTestCase.counters(task)
        note(task) { $0.lines.append(line) }
        completionHandler(refusesRedirects ? nil : request)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let line = "didReceive response \(status): expectedToReceive=\(dataTask.countOfBytesExpectedToReceive)"
        note(dataTask) { $0.lines.append(line) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        note(dataTask) { $0.received += data.count }
    }

    /// The last `totalBytesSent`, what the calls so far were told, and the
    /// task's counter read in the last call.
    let sentTotal = Locked<Int64>(0)
    let lastSendLine = Locked("didSendBodyData: never called")
    let lastSendCounters = Locked("counters: none read")

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                    totalBytesExpectedToSend: Int64) {
        var line = ""
        note(task) {
            $0.sends += 1
            $0.sentBytes += bytesSent
            $0.lastTotalSent = totalBytesSent
            $0.expectedToSend.insert(totalBytesExpectedToSend)
            line = Self.sendLine($0)
        }
        lastSendLine.withLock { $0 = line }
        if totalBytesSent == totalBytesExpectedToSend || totalBytesExpectedToSend <= 0 {
            lastSendCounters.withLock { $0 = "in the last didSendBodyData: sent=\(task.countOfBytesSent)" }
        }
        sentTotal.withLock { $0 = totalBytesSent }
    }

    private static func sendLine(_ entry: Entry) -> String {
        "didSendBodyData: called=\(entry.sends > 0) bytes=\(entry.sentBytes) lastTotal=\(entry.lastTotalSent) "
            + "expected=\(entry.expectedToSend.sorted())"
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let ending = "didComplete: \((error as NSError?).map { "\($0.domain) \($0.code)" } ?? "nil")"
        let entry = entries.withLock { $0.removeValue(forKey: task.taskIdentifier) } ?? Entry()
        entry.done.fulfill(entry.lines + ["received \(entry.received) bytes", Self.sendLine(entry), ending])
    }
}
