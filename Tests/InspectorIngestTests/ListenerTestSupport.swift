#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import InspectorIngest
import WireProtocol
import XCTest

/// A test case that starts real listeners, with socket files in a fresh
/// directory; both go away after each test.
class ListenerTestCase: XCTestCase {
    var directory = ""
    var listeners: [InspectorListener] = []

    override func setUpWithError() throws {
        directory = try ListenerTesting.makeDirectory()
    }

    override func tearDown() {
        // Closing the connections also frees any sender still blocked in send().
        for listener in listeners { listener.shutdown() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func socketPath(_ name: String = "ni.sock") -> String { directory + "/" + name }

    /// Starts a listener (on `socketPath()` unless told otherwise) and
    /// checks that it says where it listens.
    func startListener(
        _ endpoints: [Endpoint]? = nil, token: String? = nil, limits: Inbox.Limits = .standard,
        helloTimeout: Duration? = .seconds(10), rules: [TrafficRule] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws -> (InspectorListener, Inbox, [Endpoint]) {
        var configuration = ListenerConfiguration(endpoints: endpoints ?? [.unix(path: socketPath())], token: token)
        configuration.helloTimeout = helloTimeout
        configuration.rules = rules
        let inbox = Inbox(limits: limits)
        let listener = InspectorListener(configuration: configuration, inbox: inbox)
        listeners.append(listener)
        let bound = try listener.start()
        XCTAssertEqual(inbox.collect(count: bound.count), bound.map(InboxEvent.listening), file: file, line: line)
        return (listener, inbox, bound)
    }
}

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
