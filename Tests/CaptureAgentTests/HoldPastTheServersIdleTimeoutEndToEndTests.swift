// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent
@testable import CaptureAgentAsyncHTTPClient

/// As a new user met it: an AsyncHTTPClient request to httpbin on gunicorn
/// (2 s keep-alive), held at a breakpoint in the real `netinspect` in tmux
/// until gunicorn has closed the kept-alive connection, edited in a real
/// `vi`, released. It used to die at the
/// server's 2 s with `remoteConnectionClosed` while the screen said HELD;
/// now the app gets the answer to the edited request, `Host` intact.
final class HoldPastTheServersIdleTimeoutEndToEndTests: XCTestCase, @unchecked Sendable {
    private var pane: TmuxSession?

    override func tearDown() {
        pane?.kill()
    }

    func testAHeldAsyncHTTPClientRequestOutlivesGunicornsKeepAliveAndIsEditedInVi() async throws {
        let peer = try RealPeer(.gunicornKeepAlive)
        defer { peer.stop() }
        let pane = try TmuxSession(name: #function, environment: ["EDITOR": "", "VISUAL": ""])
        try pane.waitUntilListening()
        self.pane = pane
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) {
            $0.allowsControl = true
            $0.initialConnectionWait = 5
            $0.breakpointTimeout = 300
        })
        defer { agent.stop() }
        var configuration = HTTPClient.Configuration()
        agent.capture(&configuration)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { _ = client.shutdown() }
        try pane.waitFor("1 agent")

        pane.send("i")
        pane.type("~u held=yes & ~q")
        pane.send("Enter")
        try pane.waitFor("intercept: ~u held=yes & ~q")
        let filterArrived = await waitUntil { agent.breakpoints.isActive }
        XCTAssertTrue(filterArrived, "netinspect sent the filter")

        // A first request leaves a kept-alive connection for the held one to be sent on.
        let first = try await client.execute(HTTPClientRequest(url: peer.url("/anything?first=yes").absoluteString), timeout: .seconds(30))
        XCTAssertEqual(first.status, .ok)
        _ = try await first.body.collect(upTo: 1 << 20)

        var request = HTTPClientRequest(url: peer.url("/anything?held=yes").absoluteString)
        request.headers.add(name: "X-Probe", value: "1")
        let sent = Task { () -> (Int, String) in
            let response = try await client.execute(request, timeout: .seconds(120))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), String(buffer: body))
        }
        try pane.waitFor("HELD")
        // A person reading the request, past the server's patience: gunicorn
        // has closed the kept-alive connection the request would have gone on.
        let closed = await waitUntil(timeout: 20) { !TCPSockets.anyEstablished(toPort: peer.port) }
        XCTAssertTrue(closed, "gunicorn never closed the kept-alive connection")
        XCTAssertTrue(pane.capture().contains("HELD"), "still held past the server's idle timeout: \(pane.capture())")
        pane.send("Enter")
        try pane.waitFor("at a breakpoint before its request is sent")
        pane.send("e")
        // vi shows the request, with the client's own Host under its comment line.
        try pane.waitFor("Added by the client", where: { $0.lowercased().contains("host: 127.0.0.1:\(peer.port)") })
        pane.type("/X-Probe")
        pane.send("Enter")
        pane.type("oX-Edited: in-vi")
        pane.send("Escape")
        pane.type(":wq")
        pane.send("Enter")
        try pane.waitFor("Resumed with your edit")

        let (status, body) = try await sent.value
        XCTAssertEqual(status, 200)
        XCTAssertTrue(body.contains(#""X-Edited": "in-vi""#), "the edited request reached gunicorn: \(body)")
        XCTAssertTrue(body.contains(#""Host": "127.0.0.1:\#(peer.port)""#), "with its Host: \(body)")
        try pane.waitFor("Edited")
        XCTAssertFalse(pane.capture().contains("removed host"), "the edit kept Host: \(pane.capture())")
    }
}
#endif
