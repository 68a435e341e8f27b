import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import CaptureAgent

/// An agent sends nothing to a Unix-socket listener that runs as another
/// user: in /tmp anyone can bind the agent's path first, and flows carry
/// bodies and credentials.
final class ListenerOwnerTests: XCTestCase, @unchecked Sendable {
    func testTheRuleAcceptsTheSameUserAndRootOnly() {
        XCTAssertTrue(EventSocket.acceptsListener(uid: 1000, myUID: 1000))
        XCTAssertTrue(EventSocket.acceptsListener(uid: 0, myUID: 1000))
        XCTAssertFalse(EventSocket.acceptsListener(uid: 65534, myUID: 1000))
        XCTAssertFalse(EventSocket.acceptsListener(uid: 1000, myUID: 0), "root's agent does not send to a user's listener")
    }

    /// The real `netinspect`, run as `nobody`, listening where the agent
    /// sends: the agent never says hello to it, counts the refusal, and the
    /// app's requests go on. Then the same user's inspector at the same kind
    /// of path gets the next flow, so the refusal is about the owner only.
    func testAListenerOfAnotherUserGetsNothing() throws {
        // The one skip for something CI cannot promise: .ci/run may run the
        // suite as a user with sudo, and a listener of another user needs root.
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("needs root and setpriv to run a listener as another user")
        }
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let foreignPath = temporarySocketPath("foreign")
        let foreign = try InspectorProcess(listen: "unix:\(foreignPath)", asUser: 65534)
        defer {
            foreign.killAndWait()
            unlink(foreignPath)
        }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: foreignPath)) { $0.flushTimeout = 0.5 })
        defer { agent.stop() }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }

        let (outcome, _) = fetch(URLRequest(url: server.url("/text?owner=foreign")), on: session)
        XCTAssertEqual(outcome.status, 200, "the app's request is unaffected")
        XCTAssertTrue(eventually { agent.statistics.refusedListeners >= 2 }, "the agent keeps refusing as it retries")
        XCTAssertEqual(agent.statistics.connections, 0)
        XCTAssertFalse(agent.isConnected)
        XCTAssertEqual(foreign.lineCount, 0, "no flow reached the other user's listener: \(foreign.output)")
        XCTAssertFalse(foreign.errorOutput.contains("connected"), foreign.errorOutput)
    }

    func testTheSameUsersListenerIsAccepted() throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let path = temporarySocketPath("own")
        let own = try InspectorProcess(listeningOn: path)
        defer { own.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.flushTimeout = 1 })
        defer { agent.stop() }
        XCTAssertTrue(eventually { agent.isConnected })
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (outcome, _) = fetch(URLRequest(url: server.url("/text?owner=own")), on: session)
        XCTAssertEqual(outcome.status, 200)
        XCTAssertTrue(eventually { own.lineCount == 1 }, own.output)
        XCTAssertEqual(agent.statistics.refusedListeners, 0)
    }
}
