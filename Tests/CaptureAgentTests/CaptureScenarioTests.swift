import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Each scenario runs once without and once with the agent: the server must
/// see identical requests, the app identical results, and the log must tell
/// both.
final class CaptureScenarioTests: AgentTestCase, @unchecked Sendable {
    func testGETIsUnchangedAndLogged() async throws {
        let run = try await compare { (URLRequest(url: server.url("/text")), nil) }
        XCTAssertEqual(run.outcome.status, 200)
        XCTAssertEqual(run.outcome.body, Data(TestHTTPServer.textBody))
        assertLog(run)
    }

    func testPOSTWithBodyAndRepeatedHeaderIsUnchangedAndLogged() async throws {
        let run = try await compare {
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.addValue("one", forHTTPHeaderField: "X-Repeated")
            request.addValue("two", forHTTPHeaderField: "X-Repeated")
            request.httpBody = Data(#"{"hello":"world"}"#.utf8)
            return (request, nil)
        }
        XCTAssertEqual(run.requests.first?.body, Array(#"{"hello":"world"}"#.utf8))
        XCTAssertEqual(run.log?.request.headers.values(for: "X-Repeated"), ["one,two"])
        assertLog(run)
    }

    func testBodyStreamIsReadOnceForwardedAndCaptured() async throws {
        let body = Data(TestHTTPServer.pattern(count: 300_000))
        let run = try await compare {
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "PUT"
            request.httpBodyStream = InputStream(data: body)
            return (request, nil)
        }
        XCTAssertEqual(run.requests.first.map { Data($0.body) }, body)
        XCTAssertEqual(run.outcome.body, body)
        XCTAssertEqual(run.log?.request.body?.size, body.count, "stream body known only once sent")
        assertLog(run)
    }

    /// `uploadTask(withStreamedRequest:)`: the body comes from the app
    /// delegate's `needNewBodyStream`, asked by the inner task through the agent.
    func testStreamedUploadAsksTheAppsDelegateForItsBody() async throws {
        let body = Data(TestHTTPServer.pattern(count: 50_000))
        func run(captured: Bool) async -> (AppOutcome, [ReceivedRequest]) {
            let delegate = RecordingDelegate()
            delegate.bodyStream = { InputStream(data: body) }
            let session = URLSession(configuration: sessionConfiguration(captured: captured), delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            _ = server.takeRequests()
            var request = URLRequest(url: server.url("/echo?streamed-upload"))
            request.httpMethod = "POST"
            let outcome = await withCheckedContinuation { continuation in
                let task = session.uploadTask(withStreamedRequest: request)
                delegate.expect(task) { continuation.resume(returning: $0) }
                task.resume()
            }
            return (outcome, server.takeRequests())
        }
        let (expected, expectedRequests) = await run(captured: false)
        let (actual, actualRequests) = await run(captured: true)
        XCTAssertEqual(expected.body, body)
        XCTAssertEqual(actual, expected)
        XCTAssertEqual(actualRequests, expectedRequests)
        var log: NetworkLog?
        XCTAssertTrue(eventually { log = inspector.finishedFlows(urlSuffix: "streamed-upload").first; return log != nil })
        XCTAssertEqual(log?.request.body?.data, body, "the stream was read through the tee")
    }

    func testUploadFromDataIsUnchangedAndLogged() async throws {
        let body = Data(TestHTTPServer.pattern(count: 100_000))
        for style in ClientStyle.allCases {
            let run = try await compare(style: style) {
                var request = URLRequest(url: server.url("/echo?style=\(style)"))
                request.httpMethod = "POST"
                return (request, .data(body))
            }
            XCTAssertEqual(run.requests.first?.body.count, body.count, "\(style)")
            assertLog(run)
        }
    }

    func testAnUploadTasksOwnBodyWinsOverTheRequestsHTTPBody() async throws {
        let run = try await compare {
            var request = URLRequest(url: server.url("/echo?both-bodies"))
            request.httpMethod = "POST"
            request.httpBody = Data("from httpBody".utf8)
            return (request, .data(Data("from the upload task".utf8)))
        }
        XCTAssertEqual(run.requests.first.map { String(decoding: $0.body, as: UTF8.self) }, "from the upload task")
        assertLog(run)
    }

    func testUploadFromTwentyMegabyteFileIsStreamedAndLoggedTruncated() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ni-upload-\(getpid()).bin")
        try Data(TestHTTPServer.pattern(count: 20 * 1024 * 1024)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await compare(style: .asyncAwait) {
            var request = URLRequest(url: server.url("/status/201"))
            request.httpMethod = "POST"
            return (request, .file(file))
        }
        XCTAssertEqual(run.requests.first?.body.count, 20 * 1024 * 1024)
        XCTAssertEqual(run.log?.request.body?.isTruncated, true)
        XCTAssertEqual(run.log?.request.body?.data.count, agent.configuration.bodyCaptureLimit)
        assertLog(run)
    }

    func testRedirectsAreFollowedAndEachHopLogged() async throws {
        for code in [301, 302, 303, 307, 308] {
            let run = try await compare { (URLRequest(url: server.url("/redirect/\(code)?to=/text")), nil) }
            XCTAssertEqual(run.outcome.status, 200, "\(code)")
            XCTAssertEqual(run.outcome.finalURL, server.url("/text").absoluteString, "\(code)")
            XCTAssertEqual(run.requests.map(\.uri), ["/redirect/\(code)?to=/text", "/text"], "\(code)")
            XCTAssertEqual(run.log?.redirects, [RedirectHop(
                statusCode: code, from: server.url("/redirect/\(code)?to=/text").absoluteString, to: server.url("/text").absoluteString
            )])
            assertLog(run, redirects: 1)
        }
    }

    /// In place, corelibs follows the hops itself; the agent reads each
    /// one's status and `Location` from the header blocks libcurl reports.
    /// A data delegate's task is re-sent, and there every hop is seen too.
    func testEveryHopOfARedirectChainIsLogged() async throws {
        let first = server.url("/redirect/301?to=/redirect/307%3Fto=/text")
        let run = try await compare { (URLRequest(url: first), nil) }
        XCTAssertEqual(run.requests.map(\.uri), ["/redirect/301?to=/redirect/307%3Fto=/text", "/redirect/307?to=/text", "/text"])
        XCTAssertEqual(run.log?.redirects.map(\.statusCode), [301, 307], "in place")
        XCTAssertEqual(run.log?.redirects.map(\.to), [server.url("/redirect/307?to=/text").absoluteString, server.url("/text").absoluteString])
        let resent = try await compare(style: .delegate, logSuffix: "/redirect/307%3Fto=/text") { (URLRequest(url: first), nil) }
        XCTAssertEqual(resent.log?.redirects.map(\.statusCode), [301, 307], "re-sent: every hop")
        XCTAssertEqual(resent.log?.redirects.map(\.to), [server.url("/redirect/307?to=/text").absoluteString, server.url("/text").absoluteString])
        XCTAssertEqual(run.log?.redirects.map(\.to), [server.url("/redirect/307?to=/text").absoluteString, server.url("/text").absoluteString])
        assertLog(run, redirects: 2)
    }

    func testTheAppsDelegateCanRefuseARedirect() async throws {
        let run = try await compare(style: .delegate, refuseRedirects: true) {
            (URLRequest(url: server.url("/redirect/302?to=/text")), nil)
        }
        XCTAssertEqual(run.outcome.status, 302)
        XCTAssertEqual(run.requests.count, 1)
        assertLog(run, redirects: 0)
    }

    /// The inner session's challenge is answered by the app's own delegate;
    /// corelibs then retries with the credential, inside the inner session.
    func testAuthenticationChallengesAreAnsweredByTheAppsDelegate() async throws {
        for style in [ClientStyle.completionHandler, .delegate] {
            let credential = URLCredential(user: "user", password: "pass", persistence: .none)
            let run = try await compare(style: style, credential: credential) { (URLRequest(url: server.url("/auth?\(style)")), nil) }
            XCTAssertEqual(run.outcome.status, 200, "\(style)")
            if style == .completionHandler {
                XCTAssertEqual(run.outcome.body, Data("welcome\n".utf8), "only the final body")
            }
            // A data delegate gets the 401's body too ("denied\nwelcome\n"): corelibs
            // does that without the agent as well, and `compare` checked the two agree.
            XCTAssertEqual(run.requests.count, 2, "\(style): challenge, then the retry")
            XCTAssertEqual(run.log?.response?.statusCode, 200)
            XCTAssertEqual(run.log?.response?.body?.data, Data("welcome\n".utf8))
        }
    }

    func testErrorStatusesAreUnchangedAndLogged() async throws {
        for code in [404, 500] {
            let run = try await compare { (URLRequest(url: server.url("/status/\(code)")), nil) }
            XCTAssertEqual(run.outcome.status, code)
            assertLog(run)
        }
    }

    func testNoContentIsUnchangedAndLogged() async throws {
        let run = try await compare { (URLRequest(url: server.url("/status/204")), nil) }
        XCTAssertEqual(run.outcome.status, 204)
        XCTAssertEqual(run.outcome.body, Data())
        assertLog(run)
    }

    func testHEADIsUnchangedAndLogged() async throws {
        let run = try await compare {
            var request = URLRequest(url: server.url("/text"))
            request.httpMethod = "HEAD"
            return (request, nil)
        }
        XCTAssertEqual(run.requests.first?.method, "HEAD")
        XCTAssertEqual(run.outcome.body, Data())
        XCTAssertEqual(run.outcome.headers["Content-Length"], String(TestHTTPServer.textBody.count))
        assertLog(run)
    }

    func testOPTIONSAndACustomMethodAreSentAsMade() async throws {
        for method in ["OPTIONS", "PURGE"] {
            let run = try await compare {
                var request = URLRequest(url: server.url("/echo?m=\(method)"))
                request.httpMethod = method
                return (request, nil)
            }
            XCTAssertEqual(run.requests.first?.method, method)
            XCTAssertEqual(run.outcome.headers["X-Method"], method)
            XCTAssertEqual(run.log?.request.method, method)
            assertLog(run)
        }
    }

    /// Foundation on Linux merges repeated response fields into one
    /// comma-separated value before anyone, app or agent, sees them.
    func testDuplicateResponseHeadersReachTheAppAsFoundationMergesThem() async throws {
        let run = try await compare { (URLRequest(url: server.url("/dup-headers")), nil) }
        XCTAssertEqual(run.outcome.headers["X-Dup"], "first, second")
        XCTAssertEqual(run.log?.response?.headers.values(for: "X-Dup"), ["first, second"])
        XCTAssertEqual(run.log?.response?.headers.values(for: "Set-Cookie"), ["<redacted>"], "Set-Cookie is redacted by default")
        assertLog(run)
    }

    func testTenMegabyteBinaryResponseArrivesWholeAndIsLoggedTruncated() async throws {
        for style in ClientStyle.allCases {
            let run = try await compare(style: style) { (URLRequest(url: server.url("/binary/10485760?\(style)")), nil) }
            XCTAssertEqual(run.outcome.body.count, 10 * 1024 * 1024, "\(style)")
            XCTAssertEqual(run.outcome.body, Data(TestHTTPServer.pattern(count: 10 * 1024 * 1024)), "\(style)")
            XCTAssertEqual(run.log?.response?.body?.isTruncated, true)
            assertLog(run)
        }
    }

    func testGzipResponseIsDecodedAsWithoutTheAgent() async throws {
        let run = try await compare { (URLRequest(url: server.url("/gzip")), nil) }
        XCTAssertEqual(run.outcome.body, Data(TestHTTPServer.gzipPlain))
        assertLog(run)
    }

    func testTimeoutFailsWithTheSameError() async throws {
        let run = try await compare(timeout: 1) { (URLRequest(url: server.url("/slow/2500")), nil) }
        XCTAssertEqual(run.outcome.errorCode, NSURLErrorTimedOut)
        assertLog(run, state: .failed)
    }

    func testConnectionRefusedFailsWithTheSameError() async throws {
        let closed = try TestHTTPServer()
        let url = closed.url("/text")
        closed.shutdown()
        let run = try await compare { (URLRequest(url: url), nil) }
        XCTAssertEqual(run.outcome.errorCode, NSURLErrorCannotConnectToHost)
        XCTAssertTrue(run.requests.isEmpty)
        assertLog(run, state: .failed)
    }

    func testAsyncAwaitAndDelegateSessionsGetTheSameResults() async throws {
        for style in [ClientStyle.asyncAwait, .delegate] {
            let get = try await compare(style: style) { (URLRequest(url: server.url("/text?\(style)")), nil) }
            assertLog(get)
            let missing = try await compare(style: style) { (URLRequest(url: server.url("/status/404?\(style)")), nil) }
            assertLog(missing)
        }
    }
}

extension CaptureScenarioTests {
    /// The inner session keeps the original cookie storage and policy:
    /// cookies a response sets are sent on the next request and on a redirect.
    func testCookiesAreStoredAndSentAsWithoutTheAgent() async throws {
        func run(captured: Bool) async -> ([AppOutcome], [ReceivedRequest]) {
            HTTPCookieStorage.shared.cookies?.forEach(HTTPCookieStorage.shared.deleteCookie)
            let session = URLSession(configuration: sessionConfiguration(captured: captured))
            defer { session.finishTasksAndInvalidate() }
            _ = server.takeRequests()
            var outcomes: [AppOutcome] = []
            for path in ["/dup-headers", "/text", "/redirect/302?to=/echo"] {
                outcomes.append(await performExchange(URLRequest(url: server.url(path)), on: session, style: .completionHandler))
            }
            return (outcomes, server.takeRequests())
        }
        let (expected, expectedRequests) = await run(captured: false)
        let (actual, actualRequests) = await run(captured: true)
        XCTAssertEqual(actual, expected)
        XCTAssertEqual(actualRequests, expectedRequests)
        XCTAssertEqual(actualRequests.map { $0.headers.first { $0.name == "Cookie" }?.normalized.value }, [nil, "a=1; b=2", "a=1; b=2", "a=1; b=2"])
    }
}

extension CaptureScenarioTests {
    /// `data(for:delegate:)`: corelibs keeps that delegate in the task
    /// registry only, not in `task.delegate`, so nobody asks it about
    /// redirects: the redirect is followed, with the agent as without it.
    func testATaskDelegateGivenToDataForIsNotAskedAboutRedirects() async throws {
        func run(captured: Bool) async throws -> (status: Int?, requests: [ReceivedRequest], asked: [Int]) {
            let session = URLSession(configuration: sessionConfiguration(captured: captured))
            defer { session.finishTasksAndInvalidate() }
            let delegate = RecordingDelegate(refusesRedirects: true)
            _ = server.takeRequests()
            let (_, response) = try await session.data(for: URLRequest(url: server.url("/redirect/307?to=/text")), delegate: delegate)
            return ((response as? HTTPURLResponse)?.statusCode, server.takeRequests(), delegate.redirectsSeen.current)
        }
        let plain = try await run(captured: false)
        let captured = try await run(captured: true)
        XCTAssertEqual(plain.status, 200)
        XCTAssertEqual(plain.asked, [])
        XCTAssertEqual(captured.status, plain.status)
        XCTAssertEqual(captured.requests, plain.requests)
        XCTAssertEqual(captured.asked, plain.asked)
    }
}

/// Counts the bytes a data delegate is handed.
private final class ByteCounter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let bytes = Locked(0)
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bytes.withLock { $0 += data.count }
    }
}

extension CaptureScenarioTests {
    /// The delegate given to `data(for:delegate:)` is handed the body as it
    /// arrives, besides the call returning it whole.
    func testATaskDelegateGivenToDataForReceivesTheBody() async throws {
        func run(captured: Bool) async throws -> (body: Data, delegateBytes: Int) {
            let session = URLSession(configuration: sessionConfiguration(captured: captured))
            defer { session.finishTasksAndInvalidate() }
            let counter = ByteCounter()
            let (data, _) = try await session.data(for: URLRequest(url: server.url("/binary/300000")), delegate: counter)
            // Delegate calls run on the session's delegate queue, possibly after the call returned.
            eventually(timeout: 2) { counter.bytes.current == data.count }
            return (data, counter.bytes.current)
        }
        let plain = try await run(captured: false)
        let captured = try await run(captured: true)
        XCTAssertEqual(plain.delegateBytes, 300_000)
        XCTAssertEqual(captured.body, plain.body)
        XCTAssertEqual(captured.delegateBytes, plain.delegateBytes)
    }
}

extension CaptureScenarioTests {
    /// A response in the session's URL cache answers the request, with the
    /// agent as without it: the inner task gets the original task's lookup
    /// (``InnerCache``) instead of looking again. (corelibs' HTTP protocol
    /// never stores responses itself, so the app stores this one.)
    func testAResponseInTheSessionsURLCacheAnswersAsWithoutTheAgent() async throws {
        let cachedURL = server.url("/cacheable")
        func run(captured: Bool) async throws -> (outcomes: [AppOutcome], paths: [String]) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ni-cache-\(getpid())-\(captured)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: directory.path)
            let response = try XCTUnwrap(HTTPURLResponse(
                url: cachedURL, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Type": "text/plain", "Cache-Control": "max-age=600"]
            ))
            cache.storeCachedResponse(
                CachedURLResponse(response: response, data: Data("from the cache\n".utf8), userInfo: nil, storagePolicy: .allowedInMemoryOnly),
                for: URLRequest(url: cachedURL)
            )
            let configuration = sessionConfiguration(captured: captured)
            configuration.urlCache = cache
            let session = URLSession(configuration: configuration)
            defer { session.finishTasksAndInvalidate() }
            _ = server.takeRequests()
            var outcomes: [AppOutcome] = []
            for url in [cachedURL, server.url("/text"), cachedURL] {
                outcomes.append(await performExchange(URLRequest(url: url), on: session, style: .completionHandler))
            }
            return (outcomes, server.takeRequests().map(\.uri))
        }
        let expected = try await run(captured: false)
        let actual = try await run(captured: true)
        XCTAssertEqual(expected.paths, ["/text"], "without the agent the cached URL is answered from the cache")
        XCTAssertEqual(expected.outcomes.first?.body, Data("from the cache\n".utf8))
        XCTAssertEqual(actual.outcomes, expected.outcomes)
        XCTAssertEqual(actual.paths, expected.paths, "with the agent the server saw other requests")
        var logs: [NetworkLog] = []
        eventually { logs = inspector.finishedFlows(urlSuffix: "/cacheable"); return logs.count == 2 }
        XCTAssertEqual(logs.map { $0.response?.body?.data }, [Data("from the cache\n".utf8), Data("from the cache\n".utf8)], "cached answers are logged too")
    }

    /// The inner cache keeps no directory of its own and hands each lookup
    /// result to exactly one inner task.
    func testInnerCacheHandsOverOnceAndForwardsTheRest() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ni-inner-cache-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: directory.path)
        let inner = InnerCache(base: base)
        let session = URLSession(configuration: sessionConfiguration(captured: false))
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: server.url("/text"))
        let stored = CachedURLResponse(response: URLResponse(url: server.url("/text"), mimeType: "text/plain", expectedContentLength: 2, textEncodingName: nil), data: Data("hi".utf8))
        inner.handOver(stored, toTask: task.taskIdentifier)
        let first = Locked<[CachedURLResponse?]>([])
        inner.getCachedResponse(for: task) { response in first.withLock { $0.append(response) } }
        XCTAssertEqual(first.current.count, 1, "a handed-over result is given at once")
        XCTAssertEqual(first.current.first??.data, Data("hi".utf8))
        XCTAssertEqual(inner.waitingCount, 0)
        // Nothing handed over: the base cache is asked (and has nothing).
        let second = Locked<[CachedURLResponse?]>([])
        let asked = expectation(description: "base lookup")
        inner.getCachedResponse(for: task) { response in second.withLock { $0.append(response) }; asked.fulfill() }
        wait(for: [asked], timeout: 5)
        XCTAssertEqual(second.current.count, 1)
        XCTAssertNil(second.current.first ?? nil)
        // Stores go to the base cache.
        inner.storeCachedResponse(stored, for: URLRequest(url: server.url("/text")))
        XCTAssertEqual(base.cachedResponse(for: URLRequest(url: server.url("/text")))?.data, Data("hi".utf8))
        inner.handOver(nil, toTask: 99)
        inner.forget(task: 99)
        XCTAssertEqual(inner.waitingCount, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/null/"), "no directory was made for the inner cache")
    }
}
