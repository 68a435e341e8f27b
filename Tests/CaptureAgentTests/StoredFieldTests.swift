import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// `StoredField` reads private properties at offsets from the runtime's
/// field metadata; a wrong offset or type would read garbage, so these pin
/// that it reads exactly what the property holds, and refuses what it cannot.
final class StoredFieldTests: XCTestCase {
    private class Base {
        var number = 7
        var label: String? = "base"
        let queue = DispatchQueue(label: "stored-field-test")
    }

    private final class Derived: Base {
        var extra = [1, 2, 3]
    }

    func testReadsEachKindOfPropertyIncludingASuperclasssFromASubclassInstance() throws {
        let object = Derived()
        object.number = 42
        object.label = "changed"
        let number = try XCTUnwrap(StoredField("number", in: Derived.self))
        XCTAssertEqual(number.value(in: object, as: Int.self), 42)
        XCTAssertEqual(number.value(in: object) as? Int, 42)
        let label = try XCTUnwrap(StoredField("label", in: Base.self))
        XCTAssertEqual(label.value(in: object) as? String, "changed")
        object.label = nil
        XCTAssertNil(label.value(in: object) as? String)
        XCTAssertTrue(try XCTUnwrap(StoredField("queue", in: Base.self)).object(in: object) === object.queue)
        XCTAssertEqual(try XCTUnwrap(StoredField("extra", in: Derived.self)).value(in: object, as: [Int].self), [1, 2, 3])
    }

    func testMissingFieldsAndMismatchedTypesGiveNil() throws {
        XCTAssertNil(StoredField("noSuchField", in: Derived.self))
        let number = try XCTUnwrap(StoredField("number", in: Base.self))
        XCTAssertNil(number.value(in: Base(), as: Int32.self), "a read as another type must be refused")
        XCTAssertNil(number.object(in: Base()), "an Int is not a class instance")
        XCTAssertNil(try XCTUnwrap(StoredField("label", in: Base.self)).object(in: Base()), "an optional is not read as an object")
    }

    /// A store lands in exactly the property, and only for its own type; a
    /// value with references is assigned (old released, new retained).
    func testStoresAPlainValueOnlyIntoAFieldOfExactlyItsType() throws {
        let object = Derived()
        let number = try XCTUnwrap(StoredField("number", in: Base.self))
        XCTAssertTrue(number.store(99, in: object))
        XCTAssertEqual(object.number, 99)
        XCTAssertFalse(number.store(Int32(5), in: object), "a store as another type must be refused")
        XCTAssertFalse(try XCTUnwrap(StoredField("extra", in: Derived.self)).store(0, in: object))
        XCTAssertEqual(object.number, 99)
        XCTAssertEqual(object.extra, [1, 2, 3])
        XCTAssertEqual(object.label, "base", "the neighbours are untouched")
        let label = try XCTUnwrap(StoredField("label", in: Base.self))
        for _ in 0 ..< 1000 { XCTAssertTrue(label.store(Optional(String(repeating: "x", count: 100)), in: object)) }
        XCTAssertEqual(object.label, String(repeating: "x", count: 100), "a reference-counted value is assigned, not copied raw")
        XCTAssertTrue(label.store(String?.none, in: object))
        XCTAssertNil(object.label)
    }

    /// The corelibs fields the agent reads are all still there, with the
    /// types it expects (a rename in a toolchain fails here, by name).
    func testEveryCorelibsFieldTheAgentReadsExists() throws {
        let fields = TaskInternals.Fields.shared
        XCTAssertNotNil(fields.session)
        XCTAssertNotNil(fields.knownBody)
        XCTAssertTrue(try XCTUnwrap(fields.workQueue).type == DispatchQueue.self)
        XCTAssertTrue(try XCTUnwrap(fields.taskRegistry).type is AnyClass)
        XCTAssertNotNil(fields.behaviours)
    }

    /// Each task has its own work queue; reading it gives that queue, kept alive.
    func testEachTaskSWorkQueueIsRead() throws {
        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "http://127.0.0.1:9/never-sent")!
        let first = try XCTUnwrap(TaskInternals.onWorkQueue(of: session.dataTask(with: url)).workQueue)
        let second = try XCTUnwrap(TaskInternals.onWorkQueue(of: session.dataTask(with: url)).workQueue)
        XCTAssertFalse(first === second)
        XCTAssertTrue(first.label.contains("URLSessionTask"), first.label)
    }
}

/// The corelibs internals the in-place path reads, and the pure parts of
/// what it makes of libcurl's output.
final class InPlaceInternalsTests: XCTestCase {
    /// A toolchain that renames one of these fails here, by name; the agent
    /// itself would capture with less (no download body, no phases, no
    /// client headers, a 401's retry unrecorded) rather than crash.
    func testEveryCorelibsFieldTheInPlacePathReadsExists() throws {
        let native = NativeProtocolFields.shared
        XCTAssertNotNil(native.httpProtocolClass)
        XCTAssertNotNil(native.properties)
        XCTAssertNotNil(native.easyHandle)
        XCTAssertNotNil(native.rawHandle)
        XCTAssertNotNil(native.internalState)
        let task = TaskInternals.Fields.shared
        XCTAssertNotNil(task.protocolStorage)
        XCTAssertTrue(try XCTUnwrap(task.protocolLock).type == NSLock.self)
        XCTAssertNotNil(task.authRequest)
        XCTAssertTrue(Libcurl.isAvailable, "curl_easy_getinfo/curl_easy_setopt not found in the process")
    }

    /// The native protocol bound to a task owns a libcurl easy handle the
    /// agent can read, and libcurl answers for it (a fresh handle: 0 s).
    func testTheNativeProtocolsEasyHandleIsReadable() throws {
        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/never-sent")!)
        let httpClass = try XCTUnwrap(NativeProtocolFields.shared.httpProtocolClass as? URLProtocol.Type)
        let native = httpClass.init(task: task, cachedResponse: nil, client: nil)
        XCTAssertTrue(native.task === task, "bound to the task it was given")
        let handle = try XCTUnwrap(NativeProtocolFields.shared.easyHandle(of: native))
        XCTAssertEqual(Libcurl.time(.total, of: handle), 0)
        XCTAssertNil(NativeProtocolFields.shared.temporaryFileURL(of: native), "no download yet")
    }

    /// A task with no completion handler in a session with no delegate
    /// (its body reaches nobody) is told from one with a handler by the
    /// bytes of its registry behaviour, without reflecting the handler.
    func testTasksWhoseBodyReachesNobodyAreRecognised() {
        CallDelegatePattern.learn()
        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "http://127.0.0.1:9/never-sent")!
        let bare = session.dataTask(with: url)
        let handled = session.dataTask(with: url) { _, _, _ in }
        // corelibs registers a task asynchronously on the session's work queue.
        XCTAssertTrue(eventually(timeout: 2) { TaskInternals.onWorkQueue(of: bare).isUnobserved })
        XCTAssertTrue(eventually(timeout: 2) { TaskInternals.deliveryOnWorkQueue(of: handled, in: session) != nil })
        XCTAssertFalse(TaskInternals.onWorkQueue(of: handled).isUnobserved)
        let delegated = URLSession(configuration: .default, delegate: RecordingDelegate(), delegateQueue: nil)
        defer { delegated.invalidateAndCancel() }
        let toDelegate = delegated.dataTask(with: url)
        _ = eventually(timeout: 2) { TaskInternals.deliveryOnWorkQueue(of: toDelegate, in: delegated) != nil }
        XCTAssertFalse(TaskInternals.onWorkQueue(of: toDelegate).isUnobserved, "a session delegate receives it")
    }

    func testRequestHeaderBlocksAreParsedIntoFields() {
        let block = "POST /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: app (unknown version) curl/7.88.1\r\nAccept: */*\r\nX-Empty:\r\nContent-Length: 7\r\n\r\n"
        XCTAssertEqual(HeaderBlock(block).fields, [
            HTTPHeader(name: "Host", value: "127.0.0.1:8080"),
            HTTPHeader(name: "User-Agent", value: "app (unknown version) curl/7.88.1"),
            HTTPHeader(name: "Accept", value: "*/*"),
            HTTPHeader(name: "X-Empty", value: ""),
            HTTPHeader(name: "Content-Length", value: "7"),
        ])
    }

    func testHeaderBlocksTrimFieldsSkipJunkAndReadTheStatus() {
        let head = HeaderBlock("\r\nHTTP/1.1 301 Moved Permanently\nLOCATION:\t /b \r\nno colon here\r\n: no name\r\nX-Twice: 1\r\nx-twice: 2\r\n\r\n")
        XCTAssertEqual(head.status, 301)
        XCTAssertEqual(head.value(of: "location"), "/b")
        XCTAssertEqual(head.value(of: "X-TWICE"), "1", "the first of a repeated field")
        XCTAssertNil(head.value(of: "no colon here"))
        XCTAssertEqual(head.fields.map(\.name), ["LOCATION", "X-Twice", "x-twice"])
        XCTAssertNil(HeaderBlock("GET / HTTP/1.1\r\n").status, "a request line has no status")
        XCTAssertNil(HeaderBlock("HTTP/1.1 abc\r\n").status)
        XCTAssertEqual(HeaderBlock("").fields, [])
    }

    func testRedirectHopsComeFromEachExchange() {
        let start = URL(string: "http://h:1/a")!
        let end = URL(string: "http://h:1/c")!
        let chain = [
            Libcurl.Exchange(headerOut: "GET /a HTTP/1.1\r\n", headerIn: "HTTP/1.1 301 Moved\r\nLocation: /b\r\n"),
            Libcurl.Exchange(headerOut: "GET /b HTTP/1.1\r\n", headerIn: "HTTP/1.1 307 Temporary\r\nlocation: http://h:1/c\r\n"),
            Libcurl.Exchange(headerOut: "GET /c HTTP/1.1\r\n", headerIn: "HTTP/1.1 200 OK\r\n"),
        ]
        let hops = InPlaceFlow.hops(from: start, to: end, exchanges: chain)
        XCTAssertEqual(hops.map(\.status), [301, 307])
        XCTAssertEqual(hops.map(\.to.absoluteString), ["http://h:1/b", "http://h:1/c"])
        // Nothing seen: one hop, status unknown.
        XCTAssertEqual(InPlaceFlow.hops(from: start, to: end, exchanges: []).map(\.status), [0])
        // Not redirected, or the app refused the redirect: no hop.
        XCTAssertTrue(InPlaceFlow.hops(from: start, to: start, exchanges: [chain[0]]).isEmpty)
    }

    func testHeaderNamesMatchIgnoringASCIICaseOnly() {
        XCTAssertTrue(HTTPHeader.namesMatch("Content-Encoding", "content-encoding"))
        XCTAssertFalse(HTTPHeader.namesMatch("Content-Encoding", "content-encodinG2"))
        XCTAssertFalse(HTTPHeader.namesMatch("X-A", "X_A"))
        XCTAssertFalse(HTTPHeader.namesMatch("[", "{"), "only letters fold")
    }
}
