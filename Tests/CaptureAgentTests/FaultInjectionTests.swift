import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// Issue 7, faults seen from the app: the real `netinspect` killed or
/// stopped under load, and a 200 MB response. Real processes, real sockets.
final class FaultInjectionTests: XCTestCase, @unchecked Sendable {
    private var server: TestHTTPServer!

    override func setUpWithError() throws {
        server = try TestHTTPServer()
    }

    override func tearDown() {
        server?.shutdown()
    }

    private func capturedSession(_ agent: CaptureAgent, timeout: TimeInterval = 30) -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        agent.capture(configuration)
        return URLSession(configuration: configuration)
    }

    // MARK: - What the kernel says about unread bytes

    /// The measurement behind ``UnreadFrames``: SIOCOUTQ on a Unix stream
    /// socket counts skb memory, not bytes; a partly read write stays
    /// charged; and the charge vanishes when the peer goes, unread or not.
    func testTheKernelChargesUnreadFramesToTheSenderUntilThePeerIsGone() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[0]) }
        func charge() -> Int32 {
            var value: Int32 = -1
            XCTAssertEqual(ioctl(pair[0], UInt(TIOCOUTQ), &value), 0)
            return value
        }
        let payload = [UInt8](repeating: 7, count: 10_000)
        XCTAssertEqual(send(pair[0], payload, payload.count, 0), 10_000)
        let written = charge()
        XCTAssertGreaterThan(written, 10_000, "truesize: payload plus skb overhead")
        var scratch = [UInt8](repeating: 0, count: 3000)
        XCTAssertEqual(recv(pair[1], &scratch, scratch.count, 0), 3000)
        XCTAssertEqual(charge(), written, "a partly read skb stays charged in full")
        close(pair[1])
        XCTAssertEqual(charge(), 0, "the peer's unread data is freed with its socket")
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        XCTAssertEqual(getsockopt(pair[0], SOL_SOCKET, SO_ERROR, &error, &size), 0)
        XCTAssertEqual(error, ECONNRESET, "the only trace left: the peer died with unread data")
        print("SIOCOUTQ: 10000 bytes written -> \(written); after a 3000-byte read -> \(written); after the peer closed -> 0, SO_ERROR ECONNRESET")
    }

    func testUnreadFramesKeepsTheShortestRecentRunThatCoversTheCharge() {
        var frames = UnreadFrames()
        frames.wrote(bytes: 100, events: 0, chargeBefore: 0, chargeAfter: 768)
        frames.wrote(bytes: 500, events: 1, chargeBefore: 768, chargeAfter: 768 + 1280)
        frames.wrote(bytes: 500, events: 1, chargeBefore: 2048, chargeAfter: 2048 + 1280)
        XCTAssertEqual(frames.count, 3)
        XCTAssertEqual(frames.events, 2)
        frames.observe(charge: 2560)
        XCTAssertEqual(frames.count, 2, "the hello was read")
        frames.observe(charge: 1000)
        XCTAssertEqual(frames.events, 1, "only the last frame can hold 1000 of charge")
        // The peer read while we wrote: the measured rise is too small, the
        // payload size is the floor; a short charge keeps more frames, never fewer.
        frames.wrote(bytes: 400, events: 1, chargeBefore: 1280, chargeAfter: 1300)
        frames.observe(charge: 1300)
        XCTAssertEqual(frames.events, 2)
        frames.observe(charge: 0)
        XCTAssertEqual(frames.count, 0)
        XCTAssertEqual(frames.events, 0)
        frames.wrote(bytes: 10, events: 1, chargeBefore: nil, chargeAfter: nil)
        XCTAssertEqual(frames.events, 1, "no sample: kept, with its payload size as charge")
    }
}
