#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import WireProtocol
import XCTest

@testable import InspectorCore

/// What the tests of the real listener on real sockets share.
enum ListenerTesting {
    /// A new, empty directory with a short name, so socket paths stay far
    /// below the 103-byte limit.
    static func makeDirectory() throws -> String {
        var template = Array("/tmp/ni-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: try XCTUnwrap(made))
    }

    static func hello(_ app: String = "Demo", token: String? = nil, version: Int = Wire.protocolVersion) -> Hello {
        Hello(protocolVersion: version, agentName: "TestAgent", agentVersion: "1.0", appName: app, processID: 42, hostName: "test", token: token)
    }

    /// This process's resident set size in bytes, from `/proc/self/statm`
    /// (its second field counts resident pages).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

extension Inbox {
    /// Gathers events until `count` have come or `timeout` has passed.
    func collect(count: Int, timeout: Duration = .seconds(5)) -> [InboxEvent] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var events: [InboxEvent] = []
        while events.count < count {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            events += wait(timeout: remaining)
        }
        return events
    }
}
