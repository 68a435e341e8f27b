#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import XCTest

#if os(Linux)
/// TestSupport's `TCPSockets`, which the holds past a real server's idle
/// timeout wait on: a connection to a port counts until the server closes
/// its end, whatever the client does after.
final class TCPSocketsTests: XCTestCase {
    func testAConnectionCountsUntilTheServerClosesIt() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(listener, 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                guard bind(listener, address, length) == 0, listen(listener, 1) == 0,
                      getsockname(listener, address, &length) == 0 else { throw POSIXError(.EADDRINUSE) }
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        XCTAssertFalse(TCPSockets.anyEstablished(toPort: port), "nothing connected yet")

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        XCTAssertEqual(connected, 0)
        let server = accept(listener, nil, nil)
        XCTAssertGreaterThanOrEqual(server, 0)
        XCTAssertTrue(TCPSockets.anyEstablished(toPort: port), "the client's end counts while both are open")

        close(server)
        XCTAssertTrue(eventually { !TCPSockets.anyEstablished(toPort: port) }, "closed by the server, it no longer counts")
    }
}
#endif
