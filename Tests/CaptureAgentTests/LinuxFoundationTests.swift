import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Pins the swift-corelibs-foundation behaviours the agent relies on, as
/// docs/AGENT.md ("How it captures, and what differs on Linux") lists them,
/// so a toolchain change that breaks one fails here, by name.
final class LinuxFoundationTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:9/never-sent")!

    /// The task's session and body are read: upload bodies from the private
    /// `knownBody`, data-task bodies from the request (see the next test).
    func testTaskInternalsReadTheSessionAndEveryKindOfBody() throws {
        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }

        let plain = session.dataTask(with: url)
        XCTAssertTrue(TaskInternals.onWorkQueue(of: plain).session === session)
        guard case .none? = TaskInternals.onWorkQueue(of: plain).body else { return XCTFail("\(String(describing: TaskInternals.onWorkQueue(of: plain).body))") }

        let upload = session.uploadTask(with: URLRequest(url: url), from: Data("abc".utf8))
        guard case .data(let data)? = TaskInternals.onWorkQueue(of: upload).body else { return XCTFail("upload-from-data body not found") }
        XCTAssertEqual(data, Data("abc".utf8))
        XCTAssertNil(upload.originalRequest?.httpBody, "upload bodies live only in knownBody")

        let file = URL(fileURLWithPath: "/tmp/ni-\(getpid())-body.bin")
        let fileUpload = session.uploadTask(with: URLRequest(url: url), fromFile: file)
        guard case .file(let fileURL)? = TaskInternals.onWorkQueue(of: fileUpload).body else { return XCTFail("upload-from-file body not found") }
        XCTAssertEqual(fileURL, file)

        var streamed = URLRequest(url: url)
        let stream = InputStream(data: Data("s".utf8))
        streamed.httpBodyStream = stream
        guard case .stream(let found)? = TaskInternals.onWorkQueue(of: session.dataTask(with: streamed)).body else { return XCTFail("stream body not found") }
        XCTAssertTrue(found === stream)
    }

    /// A data task's `knownBody` is what its request carries: a non-empty
    /// `httpBody`, else the body stream, else none. The agent relies on this
    /// to skip reading `knownBody` for data tasks.
    func testADataTasksKnownBodyIsItsRequestsBody() throws {
        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }
        let field = try XCTUnwrap(TaskInternals.Fields.shared.knownBody)
        func known(_ request: URLRequest) -> String {
            String(describing: field.value(in: session.dataTask(with: request)))
        }
        var withData = URLRequest(url: url)
        withData.httpBody = Data("abc".utf8)
        XCTAssertTrue(known(withData).contains("data"), known(withData))
        var empty = URLRequest(url: url)
        empty.httpBody = Data()
        XCTAssertTrue(known(empty).hasSuffix("none)"), known(empty))
        var streamed = URLRequest(url: url)
        streamed.httpBodyStream = InputStream(data: Data("s".utf8))
        XCTAssertTrue(known(streamed).contains("stream"), known(streamed))
        XCTAssertTrue(known(URLRequest(url: url)).hasSuffix("none)"), known(URLRequest(url: url)))
        guard case .none? = TaskInternals.onWorkQueue(of: session.dataTask(with: empty)).body else { return XCTFail("an empty httpBody is no body, as in corelibs") }
        guard case .data(let data)? = TaskInternals.onWorkQueue(of: session.dataTask(with: withData)).body else { return XCTFail("httpBody not read") }
        XCTAssertEqual(data, Data("abc".utf8))
    }

    /// Completion handlers get their body from one `didLoad` (it replaces);
    /// data delegates get chunks. The task registry tells which is which.
    func testTaskInternalsTellCompletionHandlersFromDelegates() {
        let plain = URLSession(configuration: .default)
        let delegated = URLSession(configuration: .default, delegate: RecordingDelegate(), delegateQueue: nil)
        defer {
            plain.invalidateAndCancel()
            delegated.invalidateAndCancel()
        }
        // corelibs registers a task asynchronously on the session's work queue.
        func delivery(_ task: URLSessionTask, _ session: URLSession) -> TaskInternals.Delivery? {
            var found: TaskInternals.Delivery?
            eventually(timeout: 2) { found = TaskInternals.deliveryOnWorkQueue(of: task, in: session); return found != nil }
            return found
        }
        XCTAssertEqual(delivery(plain.dataTask(with: url) { _, _, _ in }, plain), .wholeBodyOnce)
        XCTAssertEqual(delivery(delegated.dataTask(with: url) { _, _, _ in }, delegated), .wholeBodyOnce)
        XCTAssertEqual(delivery(delegated.dataTask(with: url), delegated), .delegateChunks)
        XCTAssertEqual(delivery(plain.dataTask(with: url), plain), .wholeBodyOnce, "no delegate: nothing to stream to")
    }

    /// A session's custom protocol is consulted only at index 0 of its
    /// configuration; the default classes begin with the HTTP one.
    func testDefaultProtocolClassesPutHTTPFirst() throws {
        let classes = try XCTUnwrap(URLSessionConfiguration.default.protocolClasses)
        XCTAssertTrue(String(describing: classes.first!).contains("HTTPURLProtocol"), "\(classes)")
    }

    /// The inner session never contains the capture class, so it cannot
    /// recurse; what the app put after it keeps its place.
    func testInnerSessionsLeaveOutTheCaptureClass() {
        let defaults = URLSessionConfiguration.default.protocolClasses ?? []
        let registry = DemuxRegistry(defaultProtocolClasses: defaults, sessionNumbers: Counter())
        XCTAssertEqual(registry.innerProtocolClasses(from: [CaptureURLProtocol.self]).map(ObjectIdentifier.init), defaults.map(ObjectIdentifier.init))
        XCTAssertEqual(
            registry.innerProtocolClasses(from: [CaptureURLProtocol.self] + defaults).map(ObjectIdentifier.init),
            defaults.map(ObjectIdentifier.init)
        )
    }

    /// `URLProtocol.setProperty` does not survive on Linux: the reason the
    /// recursion guard is the inner configuration and not a request marker.
    func testRequestPropertiesDoNotSurviveACopy() {
        let request = NSMutableURLRequest(url: url)
        URLProtocol.setProperty(true, forKey: "netinspect", in: request)
        let copy = request as URLRequest
        XCTAssertNil(URLProtocol.property(forKey: "netinspect", in: copy))
    }

    /// `capture(_:)` is what makes a session captured; `start()` uses the
    /// same check on `URLSession.shared` to warn when it is too late for it.
    func testCaptureDetectionLooksAtTheFirstProtocolClass() throws {
        let agent = try CaptureAgent.start(.init(destination: .unix(path: "/tmp/ni-unused.sock")))
        defer { agent.stop() }
        let plain = URLSession(configuration: .default)
        let configuration = URLSessionConfiguration.default
        agent.capture(configuration)
        let captured = URLSession(configuration: configuration)
        defer {
            plain.invalidateAndCancel()
            captured.invalidateAndCancel()
        }
        XCTAssertFalse(CaptureAgent.isCaptured(plain))
        XCTAssertTrue(CaptureAgent.isCaptured(captured))
    }
}

/// Needs a server, so not in the plain class above.
final class HeaderOrderTests: XCTestCase {
    /// Foundation on Linux hands request headers to libcurl in dictionary
    /// order, and Swift seeds each dictionary's hashing per instance: the
    /// order on the wire varies between identical requests WITHOUT any
    /// agent. So request headers are compared as a multiset, not a sequence.
    /// With `SWIFT_DETERMINISTIC_HASHING` set (README suggests it, to spare
    /// rebuilds) every dictionary hashes alike and the order is one: the
    /// same rule, seen from its other side.
    func testFoundationSendsRequestHeadersInVaryingOrderWithoutTheAgent() async throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let session = URLSession(configuration: .default)
        defer { session.finishTasksAndInvalidate() }
        var orders = Set<[String]>()
        for _ in 0 ..< 20 {
            var request = URLRequest(url: server.url("/text"))
            for name in ["X-A", "X-B", "X-C", "X-D", "X-E", "X-F"] { request.setValue("v", forHTTPHeaderField: name) }
            _ = await performExchange(request, on: session, style: .completionHandler)
        }
        for received in server.requests { orders.insert(received.headers.map(\.name)) }
        if ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] != nil {
            XCTAssertEqual(orders.count, 1, "deterministic hashing, yet the order varies: it is not the dictionary's")
        } else {
            XCTAssertGreaterThan(orders.count, 1, "Foundation's header order became stable: compare requests in order again")
        }
    }
}

/// Reads what the agent reads, from inside `startLoading` as the agent
/// does, then fails the request without touching the network.
private final class InternalsProbe: URLProtocol {
    struct Seen: @unchecked Sendable {
        var inline: Bool?
        var delivery: TaskInternals.Delivery
        var taskDelegate: URLSessionTaskDelegate?
    }

    nonisolated(unsafe) static var seen: [String: Seen] = [:]
    static let lock = NSLock()

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        if let task {
            let internals = TaskInternals(of: task)
            let consumer = internals.consumer
            let inline = TaskInternals.Fields.shared.callsCompletionInline?.value(in: task, as: Bool.self)
            Self.lock.withLock {
                Self.seen[request.url?.path ?? ""] = Seen(inline: inline, delivery: consumer.delivery, taskDelegate: consumer.completionTaskDelegate)
            }
        }
        client?.urlProtocol(self, didFailWithError: URLError(.cancelled))
    }

    override func stopLoading() {}
}

extension LinuxFoundationTests {
    /// corelibs marks async calls, and only them, with
    /// `_callCompletionHandlerInline`; the agent skips reflecting the task's
    /// behaviour for the others unless the session has a data delegate. The
    /// outcome is the same as reflecting it every time.
    func testAsyncCallsAreMarkedAndEveryStyleGetsItsDeliveryWithoutNeedlessReflection() async throws {
        func configuration() -> URLSessionConfiguration {
            let configuration = URLSessionConfiguration.default
            configuration.protocolClasses = [InternalsProbe.self]
            configuration.urlCache = nil
            return configuration
        }
        let plain = URLSession(configuration: configuration())
        let delegate = RecordingDelegate()
        let delegated = URLSession(configuration: configuration(), delegate: delegate, delegateQueue: nil)
        defer {
            plain.invalidateAndCancel()
            delegated.invalidateAndCancel()
        }
        let base = "http://127.0.0.1:9"
        func completion(_ session: URLSession, _ path: String) async {
            await withCheckedContinuation { done in
                session.dataTask(with: URL(string: base + path)!) { _, _, _ in done.resume() }.resume()
            }
        }
        await completion(plain, "/completion-plain")
        await completion(delegated, "/completion-delegated")
        delegated.dataTask(with: URL(string: base + "/delegate")!).resume()
        let taskDelegate = RecordingDelegate()
        _ = try? await plain.data(for: URLRequest(url: URL(string: base + "/async-delegate")!), delegate: taskDelegate)
        _ = try? await plain.data(for: URLRequest(url: URL(string: base + "/async")!))
        eventually(timeout: 5) { InternalsProbe.lock.withLock { InternalsProbe.seen.count == 5 } }
        let seen = InternalsProbe.lock.withLock { InternalsProbe.seen }

        XCTAssertEqual(seen["/completion-plain"]?.inline, false)
        XCTAssertEqual(seen["/completion-plain"]?.delivery, .wholeBodyOnce)
        XCTAssertEqual(seen["/completion-delegated"]?.inline, false)
        XCTAssertEqual(seen["/completion-delegated"]?.delivery, .wholeBodyOnce)
        XCTAssertEqual(seen["/delegate"]?.inline, false)
        XCTAssertEqual(seen["/delegate"]?.delivery, .delegateChunks)
        XCTAssertEqual(seen["/async-delegate"]?.inline, true)
        XCTAssertEqual(seen["/async-delegate"]?.delivery, .wholeBodyOnce)
        XCTAssertTrue(seen["/async-delegate"]?.taskDelegate === taskDelegate, "the async call's task delegate is found")
        XCTAssertEqual(seen["/async"]?.inline, true)
        XCTAssertNil(seen["/async"]?.taskDelegate)
    }
}
