import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A request a person writes in netinspect goes through the app's own
/// client when the app allows control: the real `netinspect` in tmux, an
/// app in this process whose URLSession configuration adds a header of its
/// own, and a real loopback server that sees what was sent.
final class NewRequestThroughTheAppEndToEndTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!
    private var pane: TmuxSession?

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        pane?.kill()
        server?.shutdown()
    }

    func testAPastedCurlCommandGoesOutThroughTheAppsURLSessionMarkedComposed() throws {
        let pane = try TmuxSession(name: #function)
        try pane.waitUntilListening()
        self.pane = pane
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) {
            $0.allowsControl = true
            $0.initialConnectionWait = 5
            $0.appName = "shop-app"
        })
        defer { agent.stop() }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.httpAdditionalHeaders = ["X-App-Key": "k-123"]
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: server.url("/text?first")) { _, _, _ in done.signal() }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        try pane.waitFor("/text?first")
        _ = server.takeRequests()

        pane.send(":")
        pane.type("new curl -X PUT -H 'X-Written: by hand' --data-raw 'hello' '\(server.url("/echo?composed").absoluteString)'")
        pane.send("Enter")
        try pane.waitFor("✚ /echo?composed", where: { $0.contains(" 200 ") && $0.contains("2/2 flows") })
        let received = try XCTUnwrap(server.requests.first { $0.uri == "/echo?composed" })
        XCTAssertEqual(received.method, "PUT")
        XCTAssertEqual(received.body, Array("hello".utf8))
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-written" }?.value, "by hand")
        XCTAssertEqual(received.headers.first { $0.name.lowercased() == "x-app-key" }?.value, "k-123",
                       "the app's session configuration applied: its own client sent it")
        pane.send("G", "Enter")
        try pane.waitFor("a request you wrote, sent by the app's agent, through its URLSession")
    }
}
