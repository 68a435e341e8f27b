import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import CaptureAgent

/// Pins where corelibs calls a URL protocol relative to the app's task,
/// which decides how a handler's context reaches a URLSession flow
/// (`InboundParents`): `canInit(with:)` runs on the task that resumed it;
/// the protocol's initializer does too, but only for a session without a
/// URLCache; `startLoading()` never does.
final class TaskContextOnLinuxTests: XCTestCase {
    enum Probe {
        @TaskLocal static var label: String?
    }

    final class ProbeProtocol: URLProtocol {
        static let seen = Locked<[String]>([])

        override class func canInit(with request: URLRequest) -> Bool {
            seen.withLock { $0.append("canInit:\(Probe.label ?? "-")") }
            return true
        }

        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

        required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
            Self.seen.withLock { $0.append("init:\(Probe.label ?? "-")") }
            super.init(request: request, cachedResponse: cachedResponse, client: client)
        }

        override func startLoading() {
            Self.seen.withLock { $0.append("start:\(Probe.label ?? "-")") }
            let response = HTTPURLResponse(url: request.url!, statusCode: 204, httpVersion: "HTTP/1.1", headerFields: [:])!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocolDidFinishLoading(self)
        }

        override func stopLoading() {}
    }

    private func calls(cache: URLCache?, _ perform: (URLSession) async throws -> Void) async throws -> [String] {
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = [ProbeProtocol.self]
        configuration.urlCache = cache
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        ProbeProtocol.seen.withLock { $0 = [] }
        try await Probe.$label.withValue("app") { try await perform(session) }
        return ProbeProtocol.seen.current
    }

    private let url = URL(string: "http://127.0.0.1:9/probe")!

    func testWithoutACacheTheProtocolIsMadeOnTheAppsTask() async throws {
        let seen = try await calls(cache: nil) { _ = try await $0.data(from: url) }
        XCTAssertEqual(seen, ["canInit:app", "init:app", "start:-"])
    }

    func testWithACacheOnlyCanInitRunsOnTheAppsTask() async throws {
        let cache = URLCache(memoryCapacity: 1 << 16, diskCapacity: 0, diskPath: nil)
        let seen = try await calls(cache: cache) { _ = try await $0.data(from: url) }
        XCTAssertEqual(seen, ["canInit:app", "init:-", "start:-"])
    }

    func testACompletionHandlerTaskResumedOnTheAppsTaskIsAskedThere() async throws {
        let cache = URLCache(memoryCapacity: 1 << 16, diskCapacity: 0, diskPath: nil)
        let seen = try await calls(cache: cache) { session in
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                session.dataTask(with: url) { _, _, _ in done.resume() }.resume()
            }
        }
        XCTAssertEqual(seen.first, "canInit:app")
        XCTAssertEqual(seen.last, "start:-")
    }
}
